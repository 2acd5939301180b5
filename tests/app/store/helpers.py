"""Deterministic clock and ids for the store tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class Clock:
    """Starts at 2026-01-01 00:00 UTC and moves one second per reading."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class Ids:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> str:
        self.count += 1
        return f"id-{self.count}"
