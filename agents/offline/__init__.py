"""The offline model: deterministic, rule-based, no network (see agents/offline/README.md).

Only ``agents.models.factory`` imports this package (the eval grader imports
:mod:`agents.offline.words` alone). ``OfflineModel`` is loaded on first use, so importing a
leaf module such as ``agents.offline.words`` does not load the rule engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agents.offline.model import OfflineModel

__all__ = ["OfflineModel"]


def __getattr__(name: str) -> Any:
    if name == "OfflineModel":
        from agents.offline.model import OfflineModel

        return OfflineModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
