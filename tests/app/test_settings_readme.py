"""README's settings are the settings class's: every ``PLANWRIGHT_*`` name README gives
is a setting (or one of the few variables read elsewhere, each checked to be read where
it says), every setting has a row in the Configuration table, and the defaults and
limits README states are the class's own."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import AliasChoices

from app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
CONFIGURATION = README[README.index("## Configuration") : README.index("\n## Code map")]
LIMITS = README[README.index("### Limits and the error shape") :]
LIMITS = LIMITS[: LIMITS.index("\n### ", 1)]

# Variables README names that are not the server's settings, and the file that reads each.
READ_ELSEWHERE = {
    "PLANWRIGHT_URL": "app/client/rest.py",
    "PLANWRIGHT_TOKEN": "app/client/rest.py",
    "PLANWRIGHT_TEST_POSTGRES_URL": "tests/databases.py",
    "PLANWRIGHT_TEST_REDIS_URL": "tests/app/bus/helpers.py",
    "PLANWRIGHT_TEST_PG_BIN": "tests/faults/helpers.py",
}
_ENV_PREFIXES = ("PLANWRIGHT_", "ANTHROPIC_", "LANGFUSE_", "DATABASE_URL", "REDIS_URL")
_UNITS = {"KiB": 1024, "MiB": 1024**2, "tokens": 1}


def _names(field: str) -> list[str]:
    alias = Settings.model_fields[field].validation_alias
    return (
        list(alias.choices) if isinstance(alias, AliasChoices) else [f"PLANWRIGHT_{field.upper()}"]
    )  # type: ignore[misc]


ENV_NAMES = {name: field for field in Settings.model_fields for name in _names(field)}


@pytest.fixture
def defaults(monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The class's defaults: no environment, no .env file."""
    for name in list(os.environ):
        if name.startswith(_ENV_PREFIXES):
            monkeypatch.delenv(name)
    return Settings(_env_file=None)  # type: ignore[call-arg]


def test_every_planwright_name_in_readme_is_a_setting_or_read_where_it_says() -> None:
    named = set(re.findall(r"\bPLANWRIGHT_[A-Z0-9_]*[A-Z0-9]\b", README))
    unknown = sorted(named - set(ENV_NAMES) - set(READ_ELSEWHERE))
    assert unknown == [], f"README names settings app/settings.py does not have: {unknown}"
    for name, path in READ_ELSEWHERE.items():
        assert name not in ENV_NAMES
        assert name in (ROOT / path).read_text(), f"{name} is not read in {path}"


def test_every_setting_has_a_row_in_the_configuration_table() -> None:
    rows = [line for line in CONFIGURATION.splitlines() if line.startswith("| `")]
    missing = [
        field
        for field in Settings.model_fields
        if not any(re.match(rf"\| [^|]*`{n}`", row) for n in _names(field) for row in rows)
    ]
    assert missing == [], f"settings without a row in README's Configuration table: {missing}"


def _rows() -> list[tuple[str, str]]:
    """(variable, default cell) of every row, a row of two (``A`` / ``B``) split."""
    found = []
    for names, cell in re.findall(
        r"^\| (`[A-Z0-9_]+`(?: / `[A-Z0-9_]+`)*) \| (.*?) \|", CONFIGURATION, re.M
    ):
        variables = re.findall(r"`([A-Z0-9_]+)`", names)
        cells = cell.split(" / ") if len(variables) > 1 else [cell]
        if len(cells) == len(variables):
            found += zip(variables, cells, strict=True)
    return found


def _same(value: Any, stated: str) -> bool:
    try:
        literal = json.loads(stated)
    except ValueError:
        literal = stated
    if isinstance(value, bool) or isinstance(literal, bool):
        return value == literal
    if isinstance(value, int | float) and isinstance(literal, int | float):
        return float(value) == float(literal)
    return (str(value) if isinstance(value, Path) else value) == literal


def test_the_configuration_tables_defaults_are_the_settings_defaults(defaults: Settings) -> None:
    wrong = []
    for name, cell in _rows():
        if name not in ENV_NAMES:
            continue
        value = getattr(defaults, ENV_NAMES[name])
        literal = re.fullmatch(r"`([^`]*)`", cell.strip())
        if cell.strip() == "unset":
            if value is not None:
                wrong.append((name, cell, value))
        elif literal and value is not None and not _same(value, literal.group(1)):
            wrong.append((name, cell, value))
    assert len(_rows()) > 40  # the table is read at all
    assert wrong == [], f"README defaults that are not the settings': {wrong}"


def test_the_limits_table_names_settings_with_their_defaults(defaults: Settings) -> None:
    stated = re.findall(r"`(PLANWRIGHT_[A-Z0-9_]+)` \(([0-9,.]+)(?: ([A-Za-z]+))?\)", LIMITS)
    assert len(stated) >= 6
    for name, amount, unit in stated:
        assert name in ENV_NAMES, f"README's limits table names {name}, which is no setting"
        expected = float(amount.replace(",", "")) * _UNITS.get(unit, 1)
        value = getattr(defaults, ENV_NAMES[name])
        assert float(value) == expected, f"{name}: README says {amount} {unit}, it is {value}"
