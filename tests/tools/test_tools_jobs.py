"""add_jobs through run_tool: key derivation, names, adaptors, error codes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.tools.helpers import (
    STANDARD_BODY,
    changes,
    fails,
    fake_id,
    fresh,
    job,
    make_context,
    ok,
    pinned,
)
from tools.base import ToolContext
from tools.document import WorkflowDocument


def add_one(doc: WorkflowDocument, ctx: ToolContext, **spec: Any) -> Any:
    return ok(doc, "add_jobs", {"jobs": [spec]}, ctx)


# =========================================================================== add_jobs


@pytest.mark.parametrize(
    ("raw", "name", "key"),
    [
        ("Check coverage", "Check coverage", "check-coverage"),
        ("Fetch (v2) data!", "Fetch v2 data", "fetch-v2-data"),
        ("  Send   SMS  ", "Send SMS", "send-sms"),
        ("snake_case step", "snake_case step", "snake-case-step"),
        ("Vérifier les données", "Verifier les donnees", "verifier-les-donnees"),
        ("Straße", "Strasse", "strasse"),
    ],
)
def test_add_job_derives_key_and_sanitises_name(raw: str, name: str, key: str) -> None:
    ctx = make_context()
    doc = WorkflowDocument.new()
    result = add_one(doc, ctx, name=raw, adaptor="http")
    assert list(doc.structure.jobs) == [key]
    assert job(doc, key).name == name
    assert changes(result) == [("added", "job", key)]
    assert result.structure is not None
    assert result.structure["jobs"][0]["key"] == key
    assert result.structure["jobs"][0]["name"] == name


def test_add_job_explicit_key_is_kept(ctx: ToolContext) -> None:
    doc = WorkflowDocument.new()
    add_one(doc, ctx, key="cc_1", name="Check coverage", adaptor="fhir")
    assert list(doc.structure.jobs) == ["cc_1"]
    assert job(doc, "cc_1").name == "Check coverage"


def test_new_job_gets_factory_id_and_standard_body(ctx: ToolContext) -> None:
    doc = WorkflowDocument.new()
    add_one(doc, ctx, name="Fetch", adaptor="http")
    fetch = job(doc, "fetch")
    assert fetch.id == fake_id(1)
    assert fetch.body == STANDARD_BODY
    assert doc.to_yaml() == (
        "jobs:\n"
        "  fetch:\n"
        f"    id: {fake_id(1)}\n"
        "    name: Fetch\n"
        f"    adaptor: '{pinned('http')}'\n"
        "    body: // Add operations here\n"
    )


def test_add_five_jobs_in_one_call(ctx: ToolContext) -> None:
    doc = WorkflowDocument.new()
    names = ["One", "Two", "Three", "Four", "Five"]
    result = ok(doc, "add_jobs", {"jobs": [{"name": n, "adaptor": "common"} for n in names]}, ctx)
    keys = [n.lower() for n in names]
    assert list(doc.structure.jobs) == keys
    assert [job(doc, k).id for k in keys] == [fake_id(i) for i in range(1, 6)]
    assert all(job(doc, k).body == STANDARD_BODY for k in keys)
    assert all(job(doc, k).adaptor == pinned("common") for k in keys)
    assert changes(result) == [("added", "job", k) for k in keys]
    assert result.text.startswith("Added 5 steps:")
    assert fresh(doc).structure == doc.structure


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Vérifier", "Verifier"),
        ("Ça marche", "Ca marche"),
        ("Envoyer l'e-mail", "Envoyer l e-mail"),
        ("Tab\tand\nnewline", "Tab and newline"),
        ("Émission / réception", "Emission reception"),
    ],
)
def test_add_job_name_sanitisation(ctx: ToolContext, raw: str, expected: str) -> None:
    doc = WorkflowDocument.new()
    add_one(doc, ctx, key="step", name=raw, adaptor="http")
    assert job(doc, "step").name == expected


def test_name_of_exactly_100_chars_is_accepted(ctx: ToolContext) -> None:
    doc = WorkflowDocument.new()
    add_one(doc, ctx, name="n" * 100, adaptor="http")
    assert job(doc, "n" * 100).name == "n" * 100


def test_name_over_100_chars_is_an_error(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = fails(
        doc, "add_jobs", {"jobs": [{"name": "n" * 101, "adaptor": "http"}]}, ctx, "name_too_long"
    )
    assert "101 characters" in result.text


@pytest.mark.parametrize("raw", ["", "   ", "!!!", "🙂", "()/?"])
def test_empty_name_is_an_error(ctx: ToolContext, doc: WorkflowDocument, raw: str) -> None:
    fails(doc, "add_jobs", {"jobs": [{"name": raw, "adaptor": "http"}]}, ctx, "invalid_name")


@pytest.mark.parametrize("key", ["bad key", "-leading", "a/b", "é", "k" * 101])
def test_invalid_explicit_key(ctx: ToolContext, doc: WorkflowDocument, key: str) -> None:
    fails(
        doc,
        "add_jobs",
        {"jobs": [{"key": key, "name": "X", "adaptor": "http"}]},
        ctx,
        "invalid_key",
    )


def test_duplicate_key_with_existing_step(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = fails(
        doc,
        "add_jobs",
        {"jobs": [{"name": "check coverage!", "adaptor": "http"}]},
        ctx,
        "duplicate_job_key",
    )
    assert "'check-coverage'" in result.text


def test_duplicate_key_within_one_batch(ctx: ToolContext, doc: WorkflowDocument) -> None:
    jobs = [
        {"key": "same", "name": "First", "adaptor": "http"},
        {"key": "same", "name": "Second", "adaptor": "http"},
    ]
    fails(doc, "add_jobs", {"jobs": jobs}, ctx, "duplicate_job_key")


@pytest.mark.parametrize("name", ["Check coverage", "CHECK COVERAGE", "check Coverage"])
def test_duplicate_display_name_case_insensitive(
    ctx: ToolContext, doc: WorkflowDocument, name: str
) -> None:
    result = fails(
        doc,
        "add_jobs",
        {"jobs": [{"key": "other", "name": name, "adaptor": "http"}]},
        ctx,
        "duplicate_job_name",
    )
    assert "display names must be unique" in result.text


def test_duplicate_display_name_within_one_batch(ctx: ToolContext) -> None:
    doc = WorkflowDocument.new()
    jobs = [
        {"key": "a", "name": "Same", "adaptor": "http"},
        {"key": "b", "name": "same", "adaptor": "http"},
    ]
    fails(doc, "add_jobs", {"jobs": jobs}, ctx, "duplicate_job_name")


def test_job_key_clashing_with_trigger_key(ctx: ToolContext, doc: WorkflowDocument) -> None:
    fails(
        doc,
        "add_jobs",
        {"jobs": [{"key": "webhook", "name": "Hook", "adaptor": "http"}]},
        ctx,
        "node_key_clash",
    )


@pytest.mark.parametrize(
    ("given", "suggestion"),
    [
        ("htp", "@openfn/language-http"),
        ("salesfroce", "@openfn/language-salesforce"),
        ("dhis", "@openfn/language-dhis2"),
    ],
)
def test_unknown_adaptor_with_did_you_mean(
    ctx: ToolContext, doc: WorkflowDocument, given: str, suggestion: str
) -> None:
    result = fails(
        doc, "add_jobs", {"jobs": [{"name": "X", "adaptor": given}]}, ctx, "unknown_adaptor"
    )
    assert f"Did you mean '{suggestion}'" in result.text
    assert "Known adaptors:" in result.text and "http" in result.text


def test_unknown_adaptor_without_close_match(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = fails(
        doc, "add_jobs", {"jobs": [{"name": "X", "adaptor": "zzzzzz"}]}, ctx, "unknown_adaptor"
    )
    assert "Did you mean" not in result.text


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("http", pinned("http")),
        ("HTTP", pinned("http")),
        ("language-dhis2", pinned("dhis2")),
        ("@openfn/language-gmail", pinned("gmail")),
        ("fhir@latest", "@openfn/language-fhir@latest"),
        ("@openfn/language-http@6.5.1", "@openfn/language-http@6.5.1"),
        ("http@7.2.10", "@openfn/language-http@7.2.10"),
        ("fhir@5.0.0-beta.1", "@openfn/language-fhir@5.0.0-beta.1"),
    ],
)
def test_adaptor_resolution(ctx: ToolContext, given: str, stored: str) -> None:
    doc = WorkflowDocument.new()
    add_one(doc, ctx, name="Step", adaptor=given)
    assert job(doc, "step").adaptor == stored


@pytest.mark.parametrize("given", ["http@banana", "http@1.2", "http@v1.2.3", "http@"])
def test_invalid_adaptor_version(ctx: ToolContext, doc: WorkflowDocument, given: str) -> None:
    fails(
        doc, "add_jobs", {"jobs": [{"name": "X", "adaptor": given}]}, ctx, "invalid_adaptor_version"
    )


@pytest.mark.parametrize("field", ["id", "body"])
def test_id_and_body_parameters_are_refused(
    ctx: ToolContext, doc: WorkflowDocument, field: str
) -> None:
    spec = {"name": "X", "adaptor": "http", field: "x"}
    result = fails(doc, "add_jobs", {"jobs": [spec]}, ctx, "invalid_arguments")
    assert f"jobs.0.{field}: unknown field" in result.text
    assert "managed by the server" in result.text


@pytest.mark.parametrize(
    "args",
    [
        {"jobs": []},
        {},
        {"jobs": [{"name": "X"}]},
        {"jobs": [{"name": "X", "adaptor": "http", "code": "fn()"}]},
    ],
)
def test_add_jobs_bad_arguments(ctx: ToolContext, doc: WorkflowDocument, args: Any) -> None:
    result = fails(doc, "add_jobs", args, ctx, "invalid_arguments")
    assert "managed by the server" not in result.text


def test_one_bad_job_in_a_batch_adds_nothing(ctx: ToolContext, doc: WorkflowDocument) -> None:
    jobs = [
        {"name": "Good one", "adaptor": "http"},
        {"name": "Good two", "adaptor": "common"},
        {"name": "Bad", "adaptor": "nonsense-adaptor"},
    ]
    fails(doc, "add_jobs", {"jobs": jobs}, ctx, "unknown_adaptor")
    assert "good-one" not in doc.structure.jobs
