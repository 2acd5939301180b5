"""A bounded schemathesis run against the app's own OpenAPI, on SQLite and Postgres.

Two schemathesis phases, in process with no network: coverage (every
operation's boundary and wrong-type values, e.g. int32 maxima, missing and
unknown fields) and fuzzing (generated valid and invalid requests, a fixed seed).
Whatever comes in, the answer is never a 5xx, and every answer conforms to the
schema the OpenAPI document declares for it (errors included: ``{error: {code,
message}}``). Coverage cases are also sent with their path ids swapped for a real
workflow, project and session (every other case), so the handlers behind the 404 are
reached too. Bounded: about a minute per backend (Postgres ~55 s on a busy 2-core machine).
"""

from __future__ import annotations

from typing import Any

import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error, response_schema_conformance

from tests.app.service.helpers import EDITOR, auth, create_session, create_workflow

# Bounded: coverage is a fixed ~220 cases; fuzzing adds this many per backend.
FUZZ_EXAMPLES = 100
SEED = 26
CHECKS = [not_a_server_error, response_schema_conformance]


def _schema(client: TestClient) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_dict(client.get("/openapi.json").json())


def _real_ids(client: TestClient) -> dict[str, str]:
    workflow = create_workflow(client)
    return {
        "workflow_id": workflow["id"],
        "project_id": workflow["project_id"],
        "session_id": create_session(client, workflow["id"])["id"],
    }


def _send(
    client: TestClient, case: schemathesis.Case, *, ids: dict[str, str] | None = None
) -> str | None:
    """Send ``case``; what is wrong with the answer (a 5xx, a body the schema does not
    declare), or ``None``."""
    if ids:
        params = case.path_parameters or {}
        case.path_parameters = {k: ids.get(k, v) for k, v in params.items()}
    case.headers = {**(case.headers or {}), **auth(EDITOR)}
    kwargs: dict[str, Any] = case.as_transport_kwargs(base_url="http://testserver")
    kwargs.pop("cookies", None)
    method, url = kwargs.pop("method"), kwargs.pop("url")
    if "data" in kwargs:
        kwargs["content"] = kwargs.pop("data")
    response = client.request(method, url, **kwargs)
    try:
        case.validate_response(response, checks=CHECKS)
    except AssertionError as failure:  # schemathesis's failures are AssertionErrors
        return (
            f"{method} {url} {kwargs!r} -> {response.status_code} {response.text[:300]}: "
            + (str(failure)[:500])
        )
    return None


def test_coverage_cases_get_no_server_error_and_answers_as_declared(client: TestClient) -> None:
    schema, ids = _schema(client), _real_ids(client)
    failures, sent = [], 0
    for result in schema.get_all_operations():
        operation = result.ok()
        cases = schema.iter_coverage_cases(
            operation,
            generation_modes=list(GenerationMode),
            generation_config=schema.config.generation_for(operation=operation),
        )
        # Every other case with the real ids: each operation's 404 path and its handler
        # are both reached, at half the cost of sending every case twice.
        for n, case in enumerate(cases):
            failure = _send(client, case, ids=ids if n % 2 else None)
            sent += 1
            if failure is not None:
                failures.append(failure)
    assert sent > 200  # the run really covered the API
    assert failures == []


def test_fuzzed_requests_get_no_server_error_and_answers_as_declared(client: TestClient) -> None:
    schema, ids = _schema(client), _real_ids(client)
    modes = st.sampled_from([GenerationMode.POSITIVE, GenerationMode.NEGATIVE])

    @seed(SEED)
    @settings(
        max_examples=FUZZ_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data(), mode=modes, real=st.booleans())
    def check(data: st.DataObject, mode: GenerationMode, real: bool) -> None:
        case = data.draw(schema.as_strategy(mode))
        failure = _send(client, case, ids=ids if real else None)
        assert failure is None, failure

    check()
