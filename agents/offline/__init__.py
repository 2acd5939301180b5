"""The offline model: deterministic, rule-based, no network (see README.offline.md)."""

from agents.offline.model import OfflineModel

__all__ = ["OfflineModel"]
