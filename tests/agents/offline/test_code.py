"""The offline model through the turn harness.

Code requests, the router rule, and the code sub-agent.
"""

from __future__ import annotations

from typing import Any

import pytest

from agents.models.base import ModelRequest, RequestContext
from agents.offline.codegen import starter_code
from tests.agents.offline.cases import ask
from tests.agents.offline.documents import DOCS
from tools.catalogue.adaptors import load_catalogue
from tools.document.redaction import redact
from tools.jobcode import STANDARD_EMPTY_BODY, check_job_code

REQUESTS = [
    "fetch the patients from /api/patients",
    "send the results to the registry",
    "transform the data for the next step",
    "fetch referrals and post them to https://example.org/api/referrals",
    "",
]


@pytest.mark.parametrize("adaptor", sorted(load_catalogue().adaptors))
def test_generated_code_passes_checks_for_every_adaptor(adaptor: str) -> None:
    entry = load_catalogue().adaptors[adaptor]
    functions = [{"name": f.name, "params": list(f.params)} for f in entry.functions]
    job = {"key": "step", "name": "Sync records", "adaptor": f"{adaptor}@latest"}
    for request in REQUESTS:
        code = starter_code(job, functions, request)
        assert check_job_code(code) == [], (adaptor, request, code)
        assert "minimal placeholder" not in code, (adaptor, request)


def _route(text: str, *, page: str = "job", job_key: str | None = "check-coverage") -> Any:
    doc = DOCS["referral"]()
    response = ask(
        ModelRequest(
            role="router",
            system="",
            messages=[{"role": "user", "content": text}],
            context=RequestContext(
                user_text=text,
                structure=redact(doc.structure),
                page="job" if page == "job" else "workflow",
                job_key=job_key,
            ),
        )
    )
    (use,) = response.tool_uses
    assert use["name"] == "route"
    return use["input"]


@pytest.mark.parametrize(
    ("text", "page", "job_key", "destination"),
    [
        ("write code that fetches the coverage", "job", "check-coverage", "job_code"),
        ("make it fetch the Coverage resource", "job", "check-coverage", "job_code"),
        ("write the code for check coverage to get coverage", "job", "check-coverage", "job_code"),
        ("write the code for send email to email someone", "job", "check-coverage", "planner"),
        ("write code that fetches the coverage", "workflow", None, "planner"),
        ("rename this step to Verify", "job", "check-coverage", "planner"),
        ("what does this step do", "job", "check-coverage", "planner"),
        ("write code for all steps", "job", "check-coverage", "planner"),
    ],
)
def test_router_rules(text: str, page: str, job_key: str | None, destination: str) -> None:
    route = _route(text, page=page, job_key=job_key)
    assert route["destination"] == destination
    assert 1 <= route["confidence"] <= 5
    if destination == "job_code":
        assert route["job_key"] == job_key


def test_router_without_structure_still_routes_the_viewed_step() -> None:
    response = ask(
        ModelRequest(
            role="router",
            system="",
            messages=[{"role": "user", "content": "write code that fetches the coverage"}],
            context=RequestContext(
                user_text="write code that fetches the coverage", page="job", job_key="x"
            ),
        )
    )
    assert response.tool_uses[0]["input"]["destination"] == "job_code"


def _code_request(messages: list[dict[str, Any]], body: str = STANDARD_EMPTY_BODY) -> Any:
    return ask(
        ModelRequest(
            role="job_code",
            system="",
            messages=messages,
            context=RequestContext(
                user_text="send the referral to the registry",
                page="job",
                job_key="post-referral",
                job={
                    "key": "post-referral",
                    "name": "Post referral",
                    "adaptor": "@openfn/language-http@latest",
                    "body": body,
                },
                adaptor_functions=[
                    {"name": f.name, "params": list(f.params), "description": f.description}
                    for f in load_catalogue().adaptors["@openfn/language-http"].functions
                ],
            ),
        )
    )


def test_code_agent_falls_back_to_minimal_code_after_an_error() -> None:
    first = _code_request([{"role": "user", "content": "send the referral"}])
    (use,) = first.tool_uses
    assert use["name"] == "edit_job_code"
    code = use["input"]["edits"][0]["new_code"]
    assert "post(" in code and check_job_code(code) == []
    error = {"type": "tool_result", "tool_use_id": use["id"], "content": "boom", "is_error": True}
    messages = [
        {"role": "user", "content": "send the referral"},
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [error]},
    ]
    second = _code_request(messages)
    (fallback,) = second.tool_uses
    fallback_code = fallback["input"]["edits"][0]["new_code"]
    assert "fn(state => state);" in fallback_code and check_job_code(fallback_code) == []
    again = {**error, "tool_use_id": fallback["id"]}
    third = _code_request(
        [
            *messages,
            {"role": "assistant", "content": second.content},
            {"role": "user", "content": [again]},
        ]
    )
    assert third.tool_uses == [] and "left as it was" in third.text
