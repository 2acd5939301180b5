"""Which steps a run can reach, and which ids are used twice.

OpenFn starts a run at a trigger and follows enabled edges only, so a step no
enabled path from a trigger reaches never runs. Ids name entries across the
whole document (a CLI workflow puts jobs and triggers in one ``steps`` list), so
one id on two entries is ambiguous wherever the workflow goes.
"""

from __future__ import annotations

from collections import defaultdict

from tools.document.structure import SECTIONS, Structure


def reachable_jobs(structure: Structure, *, with_disabled: bool = False) -> set[str]:
    """Keys of the steps some trigger reaches (through enabled edges unless asked)."""
    successors: dict[str, list[str]] = defaultdict(list)
    for edge in structure.edges.values():
        if edge.enabled or with_disabled:
            successors[edge.source].append(edge.target_job)
    seen: set[str] = set()
    todo = list(structure.triggers)
    while todo:
        for target in successors.get(todo.pop(), ()):
            if target in structure.jobs and target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def unreachable_jobs(structure: Structure) -> list[str]:
    """Steps no trigger reaches, in document order; none while no trigger starts anything
    (the trigger's own problem says so, and listing every step would add nothing)."""
    if not any(structure.edges_from(key) for key in structure.triggers):
        return []
    reached = reachable_jobs(structure)
    return [key for key in structure.jobs if key not in reached]


def duplicate_ids(structure: Structure) -> dict[str, list[str]]:
    """Each id used by more than one entry, with the entries (``jobs.<key>``, ...) using it."""
    users: dict[str, list[str]] = defaultdict(list)
    for section in SECTIONS:
        for key, entry in structure.section(section).items():
            if entry.id is not None:
                users[str(entry.id)].append(f"{section}.{key}")
    return {id_: where for id_, where in users.items() if len(where) > 1}
