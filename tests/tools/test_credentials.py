"""Project credentials (tools/credentials.py), the attach_credential tool, and the
note for steps that call their adaptor with relative paths and have no baseUrl."""

from __future__ import annotations

import dataclasses
import json

import pytest
from pydantic import ValidationError

from tests.tools.helpers import changes, fails, job, make_context, ok, referral_doc
from tools.base import ToolContext
from tools.catalogue.adaptors import load_catalogue
from tools.credentials import (
    STORED,
    Credential,
    ProjectCredentials,
    base_url_warnings,
    secret_field,
)
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


# The secret fields of OpenFn's adaptor configuration schemas
# (packages/*/configuration-schema.json in OpenFn/adaptors: dhis2's pat, mpesa's
# pass_key and consumer_secret, progres' key, fhir-4's authorization, minio's
# accessKey and secretKey, azure-storage's accountKey ...) and the usual spellings.
ADAPTOR_SECRETS = [
    "password", "access_token", "accessToken", "apiKey", "api_key", "apiSecret", "apiToken",
    "authToken", "authorization", "clientSecret", "client_secret", "consumer_secret",
    "collections_token", "formSecretKey", "key", "pass_key", "pat", "private_key",
    "private_key_id", "secret", "secretAccessKey", "secretKey", "securityToken",
    "sessionToken", "token", "accessKey", "accessKeyId", "accountKey", "merchantKey",
    "subscription_key", "subscriptionKey", "consumerKey",
]  # fmt: skip
SPELLINGS = [
    "Password", "PASSWORD", "pass", "passwd", "pwd", "pw", "pass_word", "passphrase",
    "pin", "PIN", "pinCode", "otp", "privateKey", "PRIVATE_KEY", "ClientSecret",
    "clientsecret", "accesstoken", "APIKey", "apikey", "sessionId", "session_id", "cookie",
    "jwt", "signature", "bearer", "credentials", "auth", "signing_key",
]  # fmt: skip
# Their other fields, which say where and how to connect, and stay.
ADAPTOR_SETTINGS = [
    "baseUrl", "apiPath", "apiUrl", "apiVersion", "username", "userName", "user", "api_user",
    "clientId", "client_id", "client_email", "email", "subject", "tokenUrl", "token_uri",
    "auth_uri", "auth_provider_x509_cert_url", "client_x509_cert_url", "publicKey",
    "sessionHint", "accountSid", "accountName", "containerName", "host", "hostUrl", "port",
    "database", "domain", "instanceUrl", "loginUrl", "project_id", "region", "cert", "authType",
]  # fmt: skip


def _with(fields: dict[str, object], **given: object) -> Credential:
    return Credential.model_validate({"name": "x", "schema": "http", **given, "fields": fields})


@pytest.mark.parametrize("field", ADAPTOR_SECRETS + SPELLINGS)
def test_a_field_that_reads_as_a_secret_is_refused(field: str) -> None:
    with pytest.raises(ValidationError, match="secret"):
        _with({field: "s3cret"})
    assert secret_field(field)


@pytest.mark.parametrize("field", ADAPTOR_SETTINGS)
def test_the_adaptors_other_fields_are_kept(field: str) -> None:
    assert _with({field: "https://payer.example"}).fields == {field: "https://payer.example"}


@pytest.mark.parametrize(
    "field", ["allowSelfSignedCert", "trustServerCertificate", "basicAuth", "useToken"]
)
def test_a_true_or_false_setting_holds_no_secret(field: str) -> None:
    """postgresql's allowSelfSignedCert, primero's basicAuth: switches, kept; the same
    name with text in it is still refused when it reads as a secret."""
    assert _with({field: True}).fields == {field: True}
    if secret_field(field):
        with pytest.raises(ValidationError, match="secret"):
            _with({field: "ana:s3cret"})


@pytest.mark.parametrize(
    "url",
    [
        "https://ana:s3cret@payer.example",
        "https://s3cret-token@payer.example/api",
        "https://payer.example/?token=s3cret",
        "https://payer.example/v1?page=2&api_key=s3cret",
        "https://payer.example/?access_token=s3cret",
        "https://payer.example/?X-Amz-Signature=s3cret",
        "https://payer.example/?api%5Fkey=s3cret",
        "https://payer.example/callback#access_token=s3cret",
        "payer.example/?key=s3cret",
    ],
)
def test_a_url_carrying_a_secret_is_refused(url: str) -> None:
    with pytest.raises(ValidationError, match="URL") as refused:
        _with({"baseUrl": url})
    assert all("s3cret" not in e["msg"] for e in refused.value.errors())  # what a 422 says


def test_a_url_with_plain_parameters_and_a_private_key_in_text() -> None:
    kept = "https://payer.example/users/@me?page=2&q=token&tokenUrl=https://t.example"
    assert _with({"baseUrl": kept}).base_url == kept
    with pytest.raises(ValidationError, match="private key"):
        _with({"tls_material": "-----BEGIN RSA PRIVATE KEY-----\nMIIE..."})


def test_the_schema_is_an_adaptor_or_raw() -> None:
    for schema in ("http", "fhir", "dhis2", "postgresql", "raw"):
        assert _with({}, schema=schema).credential_schema == schema
    with pytest.raises(ValidationError, match="'nope' is no adaptor"):
        _with({}, schema="nope")
    with pytest.raises(ValidationError, match="did you mean 'http'"):
        _with({}, schema="htp")


@pytest.mark.parametrize("owner", ["not an email", "ana", "ana@", "@clinic.example", "a|b@c.d"])
def test_the_owner_is_an_email(owner: str) -> None:
    with pytest.raises(ValidationError, match="email"):
        _with({}, owner=owner)
    assert _with({}, owner="ana.lopez+ops@clinic.example").owner == "ana.lopez+ops@clinic.example"


def test_a_name_has_no_bar_which_would_split_lightnings_key() -> None:
    with pytest.raises(ValidationError, match="'\\|'"):
        _with({}, name="payer|portal")


def test_credentials_kept_under_older_rules_still_read() -> None:
    """The store reads rows back with ``STORED``: what was accepted before these rules
    (a pwd field, an unknown schema) is still read, never a failed request."""
    row = [{"name": "a|b", "schema": "nope", "owner": "me", "fields": {"pwd": "x"}}]
    text = json.dumps({"credentials": row})
    with pytest.raises(ValidationError):
        ProjectCredentials.model_validate_json(text)
    kept = ProjectCredentials.model_validate_json(text, context={STORED: True})
    assert kept.dump() == row


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
