"""Project credentials (tools/credentials.py), the attach_credential tool, and the
note for steps that call their adaptor with relative paths and have no baseUrl."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import ValidationError

from tests.tools.helpers import changes, fails, job, make_context, ok, referral_doc
from tools.base import ToolContext
from tools.catalogue.adaptors import load_catalogue
from tools.credentials import Credential, ProjectCredentials, base_url_warnings
from tools.document import WorkflowDocument
from tools.jobcode.stitch import stitch_job_code as stitch_body

PORTAL = Credential.model_validate(
    {"name": "payer-portal", "schema": "http", "fields": {"baseUrl": "https://payer.example"}}
)
NO_BASE = Credential.model_validate({"name": "bare", "schema": "http"})
SANDBOX = Credential.model_validate(
    {"name": "fhir-sandbox", "schema": "fhir", "owner": "ana@clinic.example"}
)
RAW = Credential.model_validate({"name": "anything", "schema": "raw"})


def with_credentials(ctx: ToolContext, *credentials: Credential) -> ToolContext:
    return dataclasses.replace(ctx, credentials={c.name: c for c in credentials})


@pytest.fixture
def ctx() -> ToolContext:
    return make_context()


@pytest.fixture
def doc(ctx: ToolContext) -> WorkflowDocument:
    return referral_doc(ctx)


# --- the model -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "field",
    ["password", "apiKey", "api_key", "access_token", "clientSecret", "privateKey", "pin"],
)
def test_a_field_that_reads_as_a_secret_is_refused(field: str) -> None:
    with pytest.raises(ValidationError, match="secret"):
        Credential.model_validate({"name": "x", "schema": "http", "fields": {field: "s3cret"}})


def test_a_url_carrying_a_user_and_password_is_refused() -> None:
    with pytest.raises(ValidationError, match="user and password"):
        Credential.model_validate(
            {"name": "x", "fields": {"baseUrl": "https://ana:s3cret@payer.example"}}
        )


def test_addresses_and_plain_settings_are_kept() -> None:
    credential = Credential.model_validate(
        {
            "name": "Payer portal",
            "schema": "http",
            "fields": {"baseUrl": "https://payer.example", "tokenUrl": "https://t", "timeout": 5},
        }
    )
    assert credential.base_url == "https://payer.example"
    assert credential.model_dump(by_alias=True)["schema"] == "http"


def test_names_are_unique_in_a_project() -> None:
    with pytest.raises(ValidationError, match="unique: a"):
        ProjectCredentials.model_validate({"credentials": [{"name": "a"}, {"name": "a"}]})


def test_lightning_keys_a_credential_by_owner_and_name() -> None:
    assert SANDBOX.lightning_key() == "ana@clinic.example|fhir-sandbox"
    assert PORTAL.lightning_key() == "payer-portal"


# --- the tool ------------------------------------------------------------------------


def test_attach_by_adaptor_names_every_step_on_it(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = ok(doc, "attach_credential", {"credential": "payer-portal", "adaptor": "http"}, ctx)
    assert job(doc, "fetch-referrals").credential == "payer-portal"
    assert job(doc, "check-coverage").credential is None
    assert changes(result) == [("updated", "job", "fetch-referrals")]
    assert "  credential: payer-portal\n" in doc.to_yaml()


def test_attach_by_keys(ctx: ToolContext, doc: WorkflowDocument) -> None:
    ok(
        doc,
        "attach_credential",
        {"credential": "anything", "job_keys": ["fetch-referrals", "notify-team"]},
        with_credentials(ctx, RAW),
    )
    assert job(doc, "fetch-referrals").credential == "anything"
    assert job(doc, "notify-team").credential == "anything"


def test_a_name_the_project_does_not_hold_is_refused_listing_its_credentials(
    ctx: ToolContext, doc: WorkflowDocument
) -> None:
    before = doc.to_yaml()
    result = fails(
        doc,
        "attach_credential",
        {"credential": "payer", "adaptor": "http"},
        with_credentials(ctx, PORTAL, SANDBOX),
        "unknown_credential",
    )
    assert "'payer-portal', 'fhir-sandbox'" in result.message
    assert doc.to_yaml() == before


def test_a_credential_of_another_schema_is_refused(ctx: ToolContext, doc: WorkflowDocument) -> None:
    result = fails(
        doc,
        "attach_credential",
        {"credential": "fhir-sandbox", "job_keys": ["fetch-referrals"]},
        with_credentials(ctx, SANDBOX),
        "credential_schema_mismatch",
    )
    assert "'Fetch referrals'" in result.message


@pytest.mark.parametrize(
    "args",
    [
        {"credential": "x"},
        {"credential": "x", "adaptor": "http", "job_keys": ["fetch-referrals"]},
        {"credential": "two\nlines", "adaptor": "http"},
    ],
)
def test_exactly_one_target_and_a_one_line_name(
    ctx: ToolContext, doc: WorkflowDocument, args: dict[str, object]
) -> None:
    fails(doc, "attach_credential", args, ctx, "invalid_arguments")


def test_no_step_on_the_adaptor(ctx: ToolContext, doc: WorkflowDocument) -> None:
    fails(
        doc,
        "attach_credential",
        {"credential": "x", "adaptor": "postgresql"},
        ctx,
        "no_matching_steps",
    )


# --- relative paths need a baseUrl ---------------------------------------------------


def test_a_step_with_relative_paths_and_no_credential_is_a_note_until_one_is_attached(
    ctx: ToolContext, doc: WorkflowDocument
) -> None:
    stitched = stitch_body(doc, "fetch-referrals", "get('referrals');\n")
    assert stitched.ok, stitched.message
    assert any(
        "'Fetch referrals' calls get('referrals') with a relative path and has no credential"
        in note
        for note in stitched.notes
    ), stitched.notes
    # Said by the change that brings it, not after every later call.
    later = ok(doc, "update_workflow", {"name": "Referral intake v2"}, ctx)
    assert not any("relative path" in note for note in later.notes)
    removed = ok(doc, "update_jobs", {"jobs": [{"key": "fetch-referrals", "name": "Fetch"}]}, ctx)
    assert not any("relative path" in note for note in removed.notes)

    attached = ok(
        doc,
        "attach_credential",
        {"credential": "bare", "adaptor": "http"},
        with_credentials(ctx, NO_BASE),
    )
    assert "its credential 'bare' has no baseUrl" in attached.text
    assert not any("relative path" in note for note in attached.notes)

    warnings = base_url_warnings(doc.structure, load_catalogue(), {"payer-portal": PORTAL})
    assert "is not one of the project's" in warnings["fetch-referrals"]
    assert base_url_warnings(doc.structure, load_catalogue(), {"bare": PORTAL}) == {}


@pytest.mark.parametrize(
    "body",
    [
        "get('https://payer.example/referrals');",
        "get(state => state.data.next);",
        "get(`${state.configuration.host}/referrals`);",
        "fn(state => state);",
    ],
)
def test_absolute_or_unknown_paths_are_not_warned_about(
    ctx: ToolContext, doc: WorkflowDocument, body: str
) -> None:
    assert stitch_body(doc, "fetch-referrals", body + "\n").ok
    assert base_url_warnings(doc.structure, load_catalogue()) == {}


def test_a_step_on_an_adaptor_test_runs_cannot_install_says_so(
    ctx: ToolContext, doc: WorkflowDocument
) -> None:
    result = ok(doc, "add_jobs", {"jobs": [{"name": "Text patient", "adaptor": "twilio"}]}, ctx)
    assert any(
        note.startswith("Test runs here cannot install @openfn/language-twilio ('Text patient')")
        for note in result.notes
    ), result.notes
    installed = ok(doc, "add_jobs", {"jobs": [{"name": "Post it", "adaptor": "http"}]}, ctx)
    assert not any("cannot install" in note for note in installed.notes)
