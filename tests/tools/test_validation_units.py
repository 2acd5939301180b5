"""Pure units: the cron validator, names, adaptor specifiers and whole-structure rules."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta, timezone

import pytest

from tests.tools.helpers import pinned
from tools.catalogue.adaptors import AdaptorCatalogue, load_catalogue
from tools.catalogue.names import adaptor_short_name, resolve_adaptor, split_adaptor
from tools.document.cron import cron_problem, next_runs, runs_text, upcoming
from tools.document.names import derive_key, did_you_mean, edge_key, is_valid_key, sanitise_name
from tools.document.structure import Edge, Job, Structure, Trigger
from tools.document.validation import Problem, validate
from tools.errors import ToolInputError


@pytest.fixture(scope="module")
def catalogue() -> AdaptorCatalogue:
    return load_catalogue()


# =========================================================================== cron

VALID_CRON = [
    "* * * * *",
    "*/15 * * * *",
    "30 7 * * 1-5",
    "0 9 1 * *",
    "0 0 * * 0",
    "0 0 * * 7",
    "0 0 * * MON-FRI",
    "0 0 * * mon,wed,fri",
    "0 0 1 JAN-DEC *",
    "0 0 1 jan,jul *",
    "0-59/5 0-23 1-31 1-12 0-6",
    "5,10,15 */2 1-15/3 */6 1-5/2",
    "59 23 31 12 6",
    "  0   7  *  *  1-5  ",
    "0 12 * * SUN",
]

INVALID_CRON = [
    ("", "5 fields"),
    ("* * * *", "got 4"),
    ("0 0 * * * *", "got 6"),
    ("0 0 1 1 * 2030", "got 6"),
    ("60 * * * *", "minute field '60': out of range"),
    ("* 24 * * *", "hour field"),
    ("* * 0 * *", "day of month field '0': out of range"),
    ("* * 32 * *", "day of month field"),
    ("* * * 0 *", "month field"),
    ("* * * 13 *", "month field"),
    ("* * * * 8", "day of week field '8': out of range"),
    ("*/0 * * * *", "minute field '*/0': step '0'"),
    ("*/x * * * *", "minute field '*/x': not a value"),
    ("5-1 * * * *", "range '5-1' runs backwards"),
    ("* * * * FRI-MON", "range 'fri-mon' runs backwards"),
    ("1,,2 * * * *", "empty list item"),
    ("a * * * *", "minute field 'a': not a value"),
    ("* * * * MON-XYZ", "day of week field"),
    ("* * * MON *", "month field 'MON': not a value"),
    ("* * * * JAN", "day of week field 'JAN': not a value"),
    ("-1 * * * *", "minute field '-1'"),
    ("1- * * * *", "minute field '1-'"),
    ("? * * * *", "'?' is an extension"),
    ("0 0 L * *", "'l' is an extension"),
    ("0 0 15W * *", "'w' is an extension"),
    ("0 0 * * 1#2", "'#' is an extension"),
    ("0 0 30 2 *", "no date ever matches"),
    ("@daily", "got 1"),
    ("every day at nine", "got 4"),
]


@pytest.mark.parametrize("expression", VALID_CRON)
def test_valid_cron(expression: str) -> None:
    assert cron_problem(expression) is None


@pytest.mark.parametrize(("expression", "reason"), INVALID_CRON)
def test_invalid_cron(expression: str, reason: str) -> None:
    problem = cron_problem(expression)
    assert problem is not None
    assert reason in problem


def test_next_runs_step_through_the_schedule() -> None:
    start = datetime(2026, 12, 4, 15, 30)  # a Friday
    assert next_runs("0 7 * * 1-5", start) == [
        datetime(2026, 12, 7, 7, 0),
        datetime(2026, 12, 8, 7, 0),
        datetime(2026, 12, 9, 7, 0),
    ]
    assert next_runs("*/20 * * * *", start, count=2) == [
        datetime(2026, 12, 4, 15, 40),
        datetime(2026, 12, 4, 16, 0),
    ]


# =========================================================================== names


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Check coverage", "Check coverage"),
        ("Vérifier", "Verifier"),
        ("Ça va", "Ca va"),
        ("Straße", "Strasse"),
        ("Fetch (v2) data!", "Fetch v2 data"),
        ("  many   spaces  ", "many spaces"),
        ("tabs\tand\nnewlines", "tabs and newlines"),
        ("keep_under-scores", "keep_under-scores"),
        ("émoji 🙂 gone", "emoji gone"),
        ("🙂", ""),
        ("", ""),
        ("/// ???", ""),
    ],
)
def test_sanitise_name(raw: str, clean: str) -> None:
    assert sanitise_name(raw) == clean


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Check coverage", "check-coverage"),
        ("Vérifier les données", "verifier-les-donnees"),
        ("snake_case name", "snake-case-name"),
        ("  A__B  ", "a-b"),
        ("-leading dash", "leading-dash"),
        ("Fetch (v2) data!", "fetch-v2-data"),
        ("UPPER", "upper"),
        ("🙂", ""),
        ("x" * 150, "x" * 100),
        ("a" * 99 + " b", "a" * 99),
    ],
)
def test_derive_key(name: str, key: str) -> None:
    derived = derive_key(name)
    assert derived == key
    assert derived == "" or is_valid_key(derived)


@pytest.mark.parametrize(
    ("key", "valid"),
    [
        ("check-coverage", True),
        ("cc_1", True),
        ("1st", True),
        ("A", True),
        ("k" * 100, True),
        ("k" * 101, False),
        ("", False),
        ("-x", False),
        ("_x", False),
        ("has space", False),
        ("a/b", False),
        ("a->b", False),
        ("é", False),
    ],
)
def test_is_valid_key(key: str, valid: bool) -> None:
    assert is_valid_key(key) is valid


@pytest.mark.parametrize(
    ("wanted", "candidates", "expected"),
    [
        ("check-coverag", ["check-coverage", "fetch", "notify"], ["check-coverage"]),
        ("CHECK-COVERAGE", ["check-coverage", "check-coverage-2"], ["check-coverage"]),
        ("zzz", ["check-coverage", "fetch"], []),
        ("fetch", [], []),
        ("notfy-team", ["notify-team", "notify-teams", "fetch"], ["notify-team", "notify-teams"]),
    ],
)
def test_did_you_mean(wanted: str, candidates: list[str], expected: list[str]) -> None:
    assert did_you_mean(wanted, candidates) == expected


def test_did_you_mean_caps_suggestions() -> None:
    pool = [f"step-{i}" for i in range(10)]
    assert len(did_you_mean("step-", pool)) == 3
    assert len(did_you_mean("step-", pool, n=5)) == 5


def test_edge_key() -> None:
    assert edge_key("webhook", "fetch") == "webhook->fetch"


# =========================================================================== adaptors


@pytest.mark.parametrize(
    ("spec", "parts"),
    [
        ("@openfn/language-http@6.5.1", ("@openfn/language-http", "6.5.1")),
        ("@openfn/language-http@latest", ("@openfn/language-http", "latest")),
        ("@openfn/language-http", ("@openfn/language-http", None)),
        ("http", ("http", None)),
        ("http@1.0.0", ("http", "1.0.0")),
        ("  fhir@5.0.15  ", ("fhir", "5.0.15")),
        ("http@", ("http", "")),
    ],
)
def test_split_adaptor(spec: str, parts: tuple[str, str | None]) -> None:
    assert split_adaptor(spec) == parts


@pytest.mark.parametrize(
    ("spec", "current", "resolved"),
    [
        ("http", None, pinned("http")),
        ("language-http", None, pinned("http")),
        ("@openfn/language-http", None, pinned("http")),
        ("HTTP", None, pinned("http")),
        ("http@latest", None, "@openfn/language-http@latest"),
        ("http@6.5.1", None, "@openfn/language-http@6.5.1"),
        ("http@1.0.0-rc.1", None, "@openfn/language-http@1.0.0-rc.1"),
        ("http", "@openfn/language-http@6.5.1", "@openfn/language-http@6.5.1"),
        ("http", "@openfn/language-http@latest", "@openfn/language-http@latest"),
        ("http@7.2.10", "@openfn/language-http@6.5.1", "@openfn/language-http@7.2.10"),
        ("http@latest", "@openfn/language-http@6.5.1", "@openfn/language-http@latest"),
        ("fhir", "@openfn/language-http@6.5.1", pinned("fhir")),
    ],
)
def test_resolve_adaptor(
    catalogue: AdaptorCatalogue, spec: str, current: str | None, resolved: str
) -> None:
    assert resolve_adaptor(spec, catalogue, current=current) == resolved


@pytest.mark.parametrize(
    ("spec", "code"),
    [
        ("htp", "unknown_adaptor"),
        ("@openfn/language-nope", "unknown_adaptor"),
        ("", "unknown_adaptor"),
        ("http@one", "invalid_adaptor_version"),
        ("http@1.2", "invalid_adaptor_version"),
        ("http@", "invalid_adaptor_version"),
    ],
)
def test_resolve_adaptor_errors(catalogue: AdaptorCatalogue, spec: str, code: str) -> None:
    with pytest.raises(ToolInputError) as info:
        resolve_adaptor(spec, catalogue)
    assert info.value.code == code


@pytest.mark.parametrize(
    ("spec", "short"),
    [("@openfn/language-http@6.5.1", "http"), ("language-fhir", "fhir"), ("dhis2", "dhis2")],
)
def test_adaptor_short_name(spec: str, short: str) -> None:
    assert adaptor_short_name(spec) == short


# =========================================================================== validate()

HTTP = "@openfn/language-http@latest"


def structure(*pairs: tuple[str, str], triggers: dict[str, Trigger] | None = None) -> Structure:
    """Jobs a-f and job-to-job edges for ``pairs``."""
    s = Structure(name="W")
    for key in "abcdef":
        s.jobs[key] = Job(key=key, id=f"id-{key}", name=key.upper(), adaptor=HTTP)
    for source, target in pairs:
        key = edge_key(source, target)
        s.edges[key] = Edge(key=key, id=f"e-{key}", target_job=target, source_job=source)
    s.triggers.update(triggers or {})
    return s


def codes(problems: list[Problem]) -> list[tuple[str, str]]:
    return [(p.code, p.subject) for p in problems]


def test_valid_structure_has_no_problems(catalogue: AdaptorCatalogue) -> None:
    assert validate(structure(("a", "b"), ("b", "c"), ("a", "c")), catalogue) == []


@pytest.mark.parametrize(
    ("pairs", "cycles"),
    [
        ([("a", "a")], ["a"]),
        ([("a", "b"), ("b", "a")], ["a,b"]),
        ([("a", "b"), ("b", "a"), ("b", "c"), ("c", "d")], ["a,b"]),
        ([("a", "b"), ("b", "a"), ("c", "d"), ("d", "e"), ("e", "c")], ["a,b", "c,d,e"]),
        ([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "d")], ["a,b,c", "d"]),
    ],
)
def test_one_cycle_problem_per_loop(
    catalogue: AdaptorCatalogue, pairs: list[tuple[str, str]], cycles: list[str]
) -> None:
    problems = [p for p in validate(structure(*pairs), catalogue) if p.code == "cycle"]
    assert [p.subject for p in problems] == [f"edges.cycle.{c}" for c in cycles]
    assert all(p.blocking for p in problems)


def test_cycle_detection_on_a_long_chain(catalogue: AdaptorCatalogue) -> None:
    s = Structure()
    keys = [f"s{i}" for i in range(3000)]
    for key in keys:
        s.jobs[key] = Job(key=key, id=key, name=key, adaptor=HTTP)
    for source, target in [*itertools.pairwise(keys), (keys[-1], keys[0])]:
        s.edges[edge_key(source, target)] = Edge(
            key=edge_key(source, target), id=None, target_job=target, source_job=source
        )
    problems = [p for p in validate(s, catalogue) if p.code == "cycle"]
    assert len(problems) == 1
    assert problems[0].subject.count(",") == 2999


def test_edge_problems(catalogue: AdaptorCatalogue) -> None:
    s = structure()
    s.edges["x"] = Edge(key="x", id="1", target_job="ghost", source_job="nobody")
    s.edges["y"] = Edge(key="y", id="2", target_job="a", condition_type="js_expression")
    s.edges["z"] = Edge(key="z", id="3", target_job="b", source_job="a", condition_expression="1")
    found = codes(validate(s, catalogue))
    assert ("unknown_edge_source", "edges.x") in found
    assert ("unknown_edge_target", "edges.x") in found
    assert ("invalid_edge_source", "edges.y") in found
    assert ("missing_condition_expression", "edges.y") in found
    assert ("unexpected_condition_expression", "edges.z") in found


def test_trigger_problems(catalogue: AdaptorCatalogue) -> None:
    triggers = {
        "t1": Trigger(key="t1", id="t1", type="cron"),
        "t2": Trigger(key="t2", id="t2", type="cron", cron_expression="61 * * * *"),
        "t3": Trigger(
            key="t3", id="t3", type="cron", cron_expression="0 * * * *", cron_cursor_job_id="gone"
        ),
    }
    problems = validate(structure(triggers=triggers), catalogue)
    found = codes(problems)
    assert ("missing_cron_expression", "triggers.t1") in found
    assert ("invalid_cron", "triggers.t2") in found
    assert ("unknown_cursor_job", "triggers.t3") in found
    unconnected = [p for p in problems if p.code == "trigger_not_connected"]
    assert len(unconnected) == 3
    assert not any(p.blocking for p in unconnected)


def test_job_problems(catalogue: AdaptorCatalogue) -> None:
    s = structure()
    s.jobs["b"] = Job(key="b", id="id-b", name="a", adaptor="@openfn/language-nope@latest")
    s.jobs["c"] = Job(key="c", id="id-c", name="Bad/Name", adaptor=HTTP)
    s.jobs["bad key"] = Job(key="bad key", id="x", name="X" * 101, adaptor=HTTP)
    found = codes(validate(s, catalogue))
    assert ("duplicate_job_name", "jobs.name.a") in found
    assert ("unknown_adaptor", "jobs.b") in found
    assert ("invalid_name", "jobs.c") in found
    assert ("invalid_key", "jobs.bad key") in found
    assert ("name_too_long", "jobs.bad key") in found


def test_upcoming_says_an_enabled_cron_triggers_next_runs_in_utc() -> None:
    friday = datetime(2026, 12, 4, 15, 30, tzinfo=UTC)
    trigger = {"type": "cron", "cron_expression": "0 7 * * 1-5", "enabled": True}
    assert upcoming(trigger, now=friday) == (
        " Next runs: Mon 7 Dec 07:00, Tue 8 Dec 07:00 and Wed 9 Dec 07:00 UTC."
    )
    # Another timezone's now is the same instant: the runs are still in UTC.
    assert upcoming(trigger, now=friday.astimezone(timezone(timedelta(hours=-5)))) == (
        upcoming(trigger, now=friday)
    )
    assert upcoming({**trigger, "enabled": False}, now=friday) == ""
    assert upcoming({**trigger, "cron_expression": "0 7 * *"}, now=friday) == ""
    assert upcoming({"type": "webhook", "enabled": True}, now=friday) == ""


def test_upcoming_counts_the_runs_asked_for_from_the_time_given() -> None:
    new_years_eve = datetime(2026, 12, 31, 23, 59, tzinfo=UTC)
    trigger = {"type": "cron", "cron_expression": "0 0 1 * *", "enabled": True}
    assert upcoming(trigger, now=new_years_eve, count=2) == (
        " Next runs: Fri 1 Jan 00:00 and Mon 1 Feb 00:00 UTC."
    )
    assert runs_text([]) == ""
