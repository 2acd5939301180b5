"""Harness for the external check against OpenFn's own ``@openfn/project`` package.

The check: our workflow documents, wrapped as a Lightning ``project.yaml``, must
load with ``@openfn/project`` (pinned in ``openfn_project/package.json`` and
``package-lock.json``), and the steps, ``next`` edges and conditions it builds
must be the ones our document describes.

How ``@openfn/project`` 0.20.2 maps a Lightning project.yaml (its "app spec"
parser, reached through ``Project.from('path', file)``) — :func:`expected_from_document`
encodes exactly this:

* workflow ``id`` = ``slugify(name ?? workflow key)``; the workflow key is lost.
* Each trigger becomes a step whose ``id`` is the trigger's ``type`` (not its key,
  not its UUID) and which keeps every other non-null trigger field verbatim
  (``enabled``, ``cron_expression``, ``cron_cursor_job_id``, ``webhook_reply``,
  ...). ``start`` is the first trigger's ``type``.
* Each job becomes a step whose ``id`` is ``slugify(name ?? job key)`` (not the
  job key, not its UUID); ``body`` -> ``expression``, ``adaptor`` and ``name``
  as is, ``credential`` -> ``configuration``; every other non-null field
  (unknown ones included) is kept on the step. Job, trigger and edge UUIDs
  are dropped.
* Each edge becomes ``source.next[target_step_id] = {condition, disabled,
  label}``: ``condition`` is ``condition_expression`` for ``js_expression`` and
  the ``condition_type`` string itself otherwise (``always``,
  ``on_job_success``, ``on_job_failure`` are *not* turned into JS);
  ``disabled = !enabled`` (a missing ``enabled`` reads as disabled);
  ``label`` = ``condition_label``. Edges whose source or target key is unknown
  are dropped silently.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

from agents.testrun.install import OpenFnRuntimeUnavailable, install_pinned

PACKAGE_DIR = Path(__file__).resolve().parent / "openfn_project"
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CACHE_DIR = REPO_ROOT / ".cache" / "openfn-project"
CHECK_SCRIPT = "check.mjs"
PROJECT_NAME = "planwright-external-check"

_NODE_TIMEOUT_S = 120

# Step fields check.mjs prints in their own slots (the rest goes to "extra").
_JOB_OWN = ("name", "adaptor", "expression")
_TRIGGER_OWN = ("type", "enabled", "cron_expression")


class OpenFnHarnessError(RuntimeError):
    """node/npm missing, the install failed, or check.mjs could not load a project."""


def pinned_version() -> str:
    """The exact ``@openfn/project`` version pinned in ``openfn_project/package.json``."""
    manifest = json.loads((PACKAGE_DIR / "package.json").read_text(encoding="utf-8"))
    version: str = manifest["dependencies"]["@openfn/project"]
    return version


def _require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise OpenFnHarnessError(
            f"`{name}` is not on PATH. The external @openfn/project check needs Node.js >= 20 "
            "and npm (CI has both); install them to run `pytest -m external`."
        )
    return path


def ensure_openfn_project_installed(cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    """Install the pinned ``@openfn/project`` into ``cache_dir`` with ``npm ci`` (the same
    idempotent installer as the runtime check) and copy check.mjs next to it. Returns
    ``cache_dir``, the folder holding ``node_modules`` that check.mjs must run from."""
    _require_tool("node")
    try:
        return install_pinned(PACKAGE_DIR, cache_dir, (CHECK_SCRIPT,))
    except OpenFnRuntimeUnavailable as exc:
        raise OpenFnHarnessError(exc.message) from exc


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _install_check_script(cache_dir: Path) -> Path:
    """check.mjs beside node_modules (bare imports resolve from the script's folder)."""
    install_pinned(PACKAGE_DIR, cache_dir, (CHECK_SCRIPT,))
    return cache_dir.resolve() / CHECK_SCRIPT


def wrap_as_lightning_project(
    workflows: Mapping[str, str], *, project_name: str = PROJECT_NAME
) -> str:
    """Build Lightning project.yaml text: ``{name, credentials: {}, workflows: {<key>: <doc>}}``.

    Each document is loaded with ruamel.yaml round-trip mode and nested as is,
    so its key order, comments, quoting and unknown fields reach the package.

    ``credentials`` is a (here empty) map in Lightning's project.yaml. It is
    written even though no job uses one because @openfn/project picks its
    parser by sniffing: a ``credentials`` map, or an edge with
    source_job/source_trigger/target_job, selects the Lightning project.yaml
    parser; without either (a document with no edges yet) it would fall back
    to the UUID-based app-state parser.
    """
    yaml = YAML()
    root = CommentedMap()
    root["name"] = project_name
    root["credentials"] = CommentedMap()
    nested = CommentedMap()
    for key, text in workflows.items():
        document = yaml.load(text)
        if not isinstance(document, Mapping):
            raise ValueError(f"workflow document {key!r} is not a YAML mapping")
        nested[key] = document
    root["workflows"] = nested
    out = io.StringIO()
    yaml.dump(root, out)
    return out.getvalue()


def load_with_openfn(
    project_yaml: str, cache_dir: Path = DEFAULT_CACHE_DIR, *, spec: bool = False
) -> dict[str, Any]:
    """Load project.yaml text with ``@openfn/project`` (via check.mjs) and return its JSON.

    With ``spec`` the JSON also holds ``spec_yaml``: the package's own project.yaml
    of what it loaded (``project.serialize('spec', {format: 'yaml'})``).
    """
    root = ensure_openfn_project_installed(cache_dir)
    script = _install_check_script(root)
    with tempfile.TemporaryDirectory(prefix="openfn-check-") as tmp:
        path = Path(tmp) / "project.yaml"
        path.write_text(project_yaml, encoding="utf-8")
        try:
            done = subprocess.run(
                [_require_tool("node"), str(script), str(path), *(["--spec"] if spec else [])],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=_NODE_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise OpenFnHarnessError(f"check.mjs did not finish within {_NODE_TIMEOUT_S}s") from exc
    if done.returncode != 0:
        raise OpenFnHarnessError(
            f"@openfn/project could not load the project (exit {done.returncode}):\n"
            f"{_tail(done.stderr or done.stdout)}"
        )
    try:
        loaded: dict[str, Any] = json.loads(done.stdout)
    except ValueError as exc:
        raise OpenFnHarnessError(
            f"check.mjs printed non-JSON output:\n{done.stdout[:2000]}"
        ) from exc
    return loaded


# --- our side: what a document should look like once @openfn/project has it ---

_NON_WORD = re.compile(r"\W", re.ASCII)
_SPACES = re.compile(r"\s+")


def slugify(text: str) -> str:
    """@openfn/project's slugify: non-word chars -> space, trim, spaces -> '-', lowercase."""
    return _SPACES.sub("-", _NON_WORD.sub(" ", text).strip()).lower()


def _json_value(value: Any) -> Any:
    """Plain YAML data as the JS side would print it through JSON."""
    if isinstance(value, Mapping):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, dt.date):  # JS `yaml` (1.2 core schema) keeps timestamps as text
        return value.isoformat()
    return value


def _load_document(doc_yaml: str) -> dict[str, Any]:
    document = YAML(typ="safe", pure=True).load(doc_yaml)
    if not isinstance(document, dict):
        raise ValueError("workflow document is not a YAML mapping")
    plain: dict[str, Any] = _json_value(document)
    return plain


def _section(document: Mapping[str, Any], name: str) -> dict[str, dict[str, Any]]:
    section = document.get(name) or {}
    if not isinstance(section, dict) or not all(isinstance(v, dict) for v in section.values()):
        raise ValueError(f"`{name}` must be a mapping of mappings")
    return section


def _extra(node: Mapping[str, Any], consumed: set[str]) -> dict[str, Any]:
    return {k: node[k] for k in sorted(node) if k not in consumed and node[k] is not None}


def expected_from_document(doc_yaml: str, *, key: str | None = None) -> dict[str, Any]:
    """Our document, normalized into the per-workflow shape check.mjs prints.

    This is the *intended* graph under @openfn/project's documented mapping
    (see the module docstring): triggers first, then jobs, each in document
    order; ``next`` built from our edges by key. Dangling edge references raise
    ``ValueError`` (the package would silently drop such an edge). ``key`` is
    the workflow key, only used for the workflow id when the document has no
    ``name``.
    """
    document = _load_document(doc_yaml)
    jobs = _section(document, "jobs")
    triggers = _section(document, "triggers")
    edges = _section(document, "edges")

    trigger_steps: dict[str, dict[str, Any]] = {}
    for trigger_key, trigger in triggers.items():
        trigger_steps[trigger_key] = {
            "id": trigger.get("type"),
            "kind": "trigger",
            **{field: trigger.get(field) for field in _TRIGGER_OWN},
            "extra": _extra(trigger, {"id", *_TRIGGER_OWN}),
            "next": {},
        }

    job_steps: dict[str, dict[str, Any]] = {}
    for job_key, job in jobs.items():
        name = job.get("name")
        extra = _extra(job, {"id", "name", "body", "adaptor", "credential"})
        if job.get("credential"):
            extra["configuration"] = job["credential"]  # no credentials map in our wrapper
        job_steps[job_key] = {
            "id": slugify(name if name is not None else job_key),
            "kind": "job",
            "name": name,
            "adaptor": job.get("adaptor"),
            "expression": job.get("body"),
            "extra": dict(sorted(extra.items())),
            "next": {},
        }

    for edge_key, edge in edges.items():
        source_trigger, source_job = edge.get("source_trigger"), edge.get("source_job")
        if (source_trigger is None) == (source_job is None):
            raise ValueError(f"edge {edge_key!r}: exactly one of source_trigger / source_job")
        if source_trigger is not None:
            source = trigger_steps.get(str(source_trigger))
        else:
            source = job_steps.get(str(source_job))
        target = job_steps.get(str(edge.get("target_job")))
        if source is None or target is None:
            raise ValueError(f"edge {edge_key!r} references an unknown trigger or job")
        condition_type = edge.get("condition_type")
        source["next"][target["id"]] = {
            "condition": (
                edge.get("condition_expression")
                if condition_type == "js_expression"
                else condition_type
            ),
            "disabled": not edge.get("enabled"),
            "label": edge.get("condition_label"),
        }

    name = document.get("name")
    first_trigger = next(iter(triggers.values()), None)
    return {
        "id": slugify(name if name is not None else (key or "")),
        "name": name,
        "start": first_trigger.get("type") if first_trigger else None,
        "steps": [*trigger_steps.values(), *job_steps.values()],
    }
