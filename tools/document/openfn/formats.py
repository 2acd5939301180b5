"""The three formats a workflow leaves and enters Planwright in, by name.

``yaml`` is Planwright's own document (lossless: ids, comments, unknown
fields); ``lightning`` a Lightning ``project.yaml`` (:mod:`.lightning`);
``cli`` the CLI's ``workflow.json`` (:mod:`.cli`). A whole project (several
workflows) leaves and enters as one ``project.yaml``: :func:`export_project`,
:func:`import_project`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from tools.catalogue.adaptors import AdaptorCatalogue, load_catalogue
from tools.credentials import Credential, base_url_warnings
from tools.document import WorkflowDocument
from tools.document.importing import mint_missing_ids
from tools.document.openfn.cli import to_cli_workflow
from tools.document.openfn.cli_import import from_cli_json
from tools.document.openfn.fields import mapping, text
from tools.document.openfn.ids import step_ids
from tools.document.openfn.lightning import to_lightning_yaml
from tools.document.openfn.lightning_import import from_lightning_project, from_lightning_yaml
from tools.document.yaml_io import DEFAULT_MAX_BYTES, load_yaml

Format = Literal["yaml", "lightning", "cli"]
FORMATS: tuple[str, ...] = get_args(Format)


@dataclass(frozen=True)
class Exported:
    """One exported file: its text, media type and a file name to save it as."""

    text: str
    media_type: str
    filename: str
    warnings: tuple[str, ...] = ()
    """What OpenFn would trip over in it: steps that need a baseUrl their credential does
    not give, credentials Lightning cannot find (the file is still written)."""


def export_warnings(
    docs: Sequence[WorkflowDocument],
    credentials: Mapping[str, Credential] | None,
    catalogue: AdaptorCatalogue | None = None,
) -> tuple[str, ...]:
    """Per step, what OpenFn would trip over (:func:`base_url_warnings`), and each
    credential a step names that Lightning cannot match (no owner given)."""
    catalogue = catalogue or load_catalogue()
    warnings: list[str] = []
    for doc in docs:
        warnings += base_url_warnings(doc.structure, catalogue, credentials).values()
    used = {j.credential for d in docs for j in d.structure.jobs.values() if j.credential}
    for name in sorted(used):
        credential = (credentials or {}).get(name)
        if credential is not None and credential.owner is None:
            warnings.append(
                f"Credential {name!r} has no owner: Lightning finds a credential by its "
                "owner's email and its name, so the project.yaml names it without one."
            )
    return tuple(dict.fromkeys(warnings))


def export_workflow(
    doc: WorkflowDocument,
    fmt: Format,
    *,
    credentials: Mapping[str, Credential] | None = None,
    catalogue: AdaptorCatalogue | None = None,
) -> Exported:
    """``doc`` in ``fmt``; :class:`~tools.errors.DocumentError` when OpenFn could not take it.

    ``credentials`` are its project's (names, schemas, owners, non-secret fields): the
    ``lightning`` file lists those its steps use, and the warnings are checked against
    them."""
    warnings = export_warnings([doc], credentials, catalogue)
    if fmt == "lightning":
        text = to_lightning_yaml([doc], credentials=credentials)
        return Exported(text, "application/yaml", "project.yaml", warnings)
    if fmt == "cli":
        text = json.dumps(to_cli_workflow(doc), indent=2, ensure_ascii=False) + "\n"
        return Exported(text, "application/json", "workflow.json", warnings)
    name = step_ids(doc.structure).workflow if doc.structure.name else "workflow"
    return Exported(doc.to_yaml(), "application/yaml", f"{name}.yaml", warnings)


@dataclass(frozen=True)
class ImportedProject:
    """What a Lightning ``project.yaml`` holds: its name (if it has one) and its
    workflows in file order."""

    name: str | None
    workflows: list[WorkflowDocument]


def export_project(
    docs: Sequence[WorkflowDocument],
    *,
    name: str,
    credentials: Mapping[str, Credential] | None = None,
    catalogue: AdaptorCatalogue | None = None,
) -> Exported:
    """The workflows of project ``name`` as one Lightning ``project.yaml``, in order,
    keyed as ``@openfn/project`` derives keys; :class:`~tools.errors.DocumentError`
    (``export_id_clash``, naming both) when two of them would get the same key."""
    text = to_lightning_yaml(docs, project_name=name, credentials=credentials)
    warnings = export_warnings(docs, credentials, catalogue)
    return Exported(text, "application/yaml", "project.yaml", warnings)


def import_project(
    text_: str,
    *,
    new_id: Callable[[], str],
    max_bytes: int = DEFAULT_MAX_BYTES,
    allow_empty: bool = True,
    files: Mapping[str, str] | None = None,
) -> ImportedProject:
    """A Lightning ``project.yaml`` as a project: every workflow, or (any bad field)
    :class:`~tools.errors.DocumentError` naming it and nothing. A file whose
    ``workflows`` is empty is an empty project, or refused without ``allow_empty``."""
    data = load_yaml(text_, max_bytes=max_bytes)
    project = mapping(data, "project")
    name = text(project, "name", "project")
    if allow_empty and not mapping(project.get("workflows"), "workflows"):
        return ImportedProject(name, [])
    return ImportedProject(
        name, from_lightning_project(data, new_id=new_id, max_bytes=max_bytes, files=files)
    )


def import_workflows(
    fmt: Format,
    text: str,
    *,
    new_id: Callable[[], str],
    max_bytes: int = DEFAULT_MAX_BYTES,
    files: Mapping[str, str] | None = None,
) -> list[WorkflowDocument]:
    """The workflows ``text`` holds (a project may hold several), every id minted.
    ``files`` (path -> text) are the files job bodies name (``body: {path}``, a CLI
    ``expression`` that is a path).

    All or nothing: any bad field raises :class:`~tools.errors.DocumentError`
    naming it, and no document is returned.
    """
    if fmt == "lightning":
        return from_lightning_yaml(text, new_id=new_id, max_bytes=max_bytes, files=files)
    if fmt == "cli":
        return [from_cli_json(text, new_id=new_id, max_bytes=max_bytes, files=files)]
    doc = WorkflowDocument.from_yaml(text, max_bytes=max_bytes)
    mint_missing_ids(doc, new_id)
    return [doc]


def guess_format(text: str, filename: str = "") -> Format:
    """The format of a file by its name, else its content (for the command line)."""
    lowered = filename.lower()
    if lowered.endswith(".json") or text.lstrip().startswith("{"):
        return "cli"
    if "project" in lowered.rsplit("/", 1)[-1]:
        return "lightning"
    head = [line for line in text.splitlines() if line and not line.startswith((" ", "#"))]
    return "lightning" if any(line.startswith("workflows:") for line in head) else "yaml"
