"""The ids OpenFn gives a workflow's parts, derived the way ``@openfn/project`` does.

``@openfn/project`` (0.20.2) names a job's step ``slugify(name ?? key)``, a
trigger's step by the trigger's ``type``, an edge ``"<source>-><target>"`` by
those step ids and a workflow ``slugify(name ?? key)``; when it writes a
Lightning ``project.yaml`` it keys each section by exactly these. Planwright's
own keys (which a ``new_key`` rename changes) never reach OpenFn: exports use
these ids, so renaming a key here changes nothing there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from tools.document.structure import Structure
from tools.errors import DocumentError
from tools.jobcode.parse import STANDARD_EMPTY_BODY

# JavaScript's /\W/g without the u flag is ASCII-only; \s then meets only what \W left.
_NON_WORD = re.compile(r"\W", re.ASCII)
_SPACES = re.compile(r"\s+")


def slugify(text: str) -> str:
    """``@openfn/project``'s slugify: non-word characters to spaces, trim, runs of
    spaces to ``-``, lower case (``"Check: coverage_2"`` -> ``"check-coverage_2"``)."""
    return _SPACES.sub("-", _NON_WORD.sub(" ", text).strip()).lower()


def export_body(body: str | None) -> str:
    """A job body as it leaves Planwright: never blank (OpenFn rejects an empty job)."""
    return body if body is not None and body.strip() else STANDARD_EMPTY_BODY


@dataclass(frozen=True)
class StepIds:
    """Step id of every job key and trigger key of one workflow, and the workflow's id."""

    workflow: str
    """``slugify(name)`` of the workflow (its key in a project's ``workflows:``)."""
    jobs: dict[str, str]
    """Job key -> ``slugify(job name)``."""
    triggers: dict[str, str]
    """Trigger key -> trigger type (or the key it was imported under, ``trigger_keys``)."""

    def node(self, key: str) -> str:
        """The step id of a job or trigger key."""
        return self.jobs[key] if key in self.jobs else self.triggers[key]


def step_ids(
    structure: Structure,
    *,
    fallback_name: str = "workflow",
    trigger_keys: Mapping[str, str] | None = None,
) -> StepIds:
    """The ids OpenFn will give ``structure``'s steps; raises if two would share one.

    Two parts OpenFn would identify the same way (two names with one slug, two
    triggers of one type, a step named like a trigger type) would silently merge
    there, so the export refuses them and names both.
    """
    jobs = {key: slugify(job.name or key) for key, job in structure.jobs.items()}
    # A trigger imported under a key of its own (``trigger-one``) keeps it.
    kept = trigger_keys or {}
    triggers = {key: kept.get(key) or trigger.type for key, trigger in structure.triggers.items()}
    owner: dict[str, str] = {}
    for section, ids in (("triggers", triggers), ("jobs", jobs)):
        for key, step_id in ids.items():
            where = f"{section}.{key}"
            if not step_id:
                raise DocumentError(
                    f"{where}: its name gives an empty OpenFn step id; give it a name with "
                    "letters or digits.",
                    code="export_id_empty",
                    field=where,
                )
            if step_id in owner:
                raise DocumentError(
                    f"{where} and {owner[step_id]} would both be step {step_id!r} in OpenFn, "
                    "which names steps by slugified name and triggers by type; rename one "
                    "before exporting.",
                    code="export_id_clash",
                    field=where,
                )
            owner[step_id] = where
    workflow = slugify(structure.name or "") or slugify(fallback_name)
    return StepIds(workflow=workflow, jobs=jobs, triggers=triggers)
