"""Which steps test runs here cannot run: their adaptor is not installed with the runtime.

The catalogue's ``installed`` (generated from ``agents/testrun/node/package.json``)
names the adaptors the test-run runtime has; a step on any other adaptor is reported
``unsupported`` by a test run (it still runs in OpenFn). A call that adds a step or
changes its adaptor says so, once per adaptor, so the reply can tell the user before
they try.
"""

from __future__ import annotations

from collections.abc import Iterable

from tools.catalogue.adaptors import AdaptorCatalogue
from tools.catalogue.names import split_adaptor
from tools.document.structure import Change, Structure


def not_installed_notes(
    structure: Structure, changes: Iterable[Change], catalogue: AdaptorCatalogue
) -> list[str]:
    """One sentence per adaptor, not installed here, that the changed steps now use."""
    steps: dict[str, list[str]] = {}
    for change in changes:
        if change.kind != "job" or change.key not in structure.jobs:
            continue
        if change.action != "added" and not (
            change.action == "updated" and "adaptor" in change.detail.split(", ")
        ):
            continue
        job = structure.jobs[change.key]
        package = split_adaptor(job.adaptor)[0]
        adaptor = catalogue.get(package)
        if adaptor is None or adaptor.installed is not None:
            continue
        steps.setdefault(adaptor.name, []).append(job.name)
    return [
        f"Test runs here cannot install {package} ({', '.join(repr(n) for n in names)}): "
        "a test run reports "
        + ("that step" if len(names) == 1 else "those steps")
        + " unsupported; OpenFn itself runs "
        + ("it." if len(names) == 1 else "them.")
        for package, names in steps.items()
    ]
