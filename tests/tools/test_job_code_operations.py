"""The operations a body calls must exist in its step's adaptor (per the facts)."""

from __future__ import annotations

import pytest

from tools.catalogue.adaptors import Adaptor, load_catalogue
from tools.document import WorkflowDocument
from tools.jobcode import check_job_code, problems_error_code
from tools.jobcode.stitch import stitch_job_code


def _adaptor(short: str) -> Adaptor:
    adaptor = load_catalogue().get(short)
    assert adaptor is not None, short
    return adaptor


def _unknown(body: str, short: str) -> list[str]:
    return [
        p.message for p in check_job_code(body, _adaptor(short)) if p.rule == "unknown_operation"
    ]


@pytest.mark.parametrize(
    ("short", "body"),
    [
        ("http", "get('/a');\npost('/b', $.data);\nfn(state => state);\n"),
        ("http", "each('$.items[*]', post('/x', state => state.data));\n"),
        ("http", "get(encodeURIComponent('a b')).then(state => state);\n"),
        ("http", "fn(state => { const r = helper(state); return JSON.parse(r); });\n"),
        ("http", "get('/a', { headers: { at: Date.now() } });\n"),
        ("http", "dateFns.format(new Date(), 'yyyy');\n"),  # re-exported namespace
        ("common", "http.post('/x', {});\nfn(s => s);\n"),
        ("collections", "collections.set('c', 'k', $.v);\ncollections.get('c', '*');\n"),
        ("salesforce", "bulk2.query('SELECT Id FROM Account');\n"),
        ("dhis2", "tracker.import('CREATE', $.data);\nhttp.patch('x', {});\n"),
        ("mysql", "sql('SELECT 1');\n"),
        ("gemini", "fn(state => state);\nprompt('hi');\n"),  # exports not in the facts
    ],
)
def test_operations_the_adaptor_has_pass(short: str, body: str) -> None:
    assert check_job_code(body, _adaptor(short)) == []


@pytest.mark.parametrize(
    ("short", "body", "name", "hint"),
    [
        ("msgraph", "sendMail({ to: 'x' });\n", "sendMail", "its functions are create, get"),
        ("mysql", "query('SELECT 1');\n", "query", "its functions are sql"),
        ("salesforce", "bulk('Account', 'insert', {}, $.data);\n", "bulk", ""),
        ("collections", "set('c', 'k', $.v);\n", "set", "did you mean `collections.set`"),
        ("collections", "fn(state => state);\n", "fn", ""),  # only the namespace is exported
        ("http", "http.post('/x', {});\n", "http.post", "did you mean `post`"),
        ("http", "each('$.items[*]', psot('/x'));\n", "psot", "did you mean `post`"),
        ("http", "get('/a').then(fnn(s => s));\n", "fnn", "did you mean `fn`"),
        ("gmail", "sendMail($.msg);\n", "sendMail", "did you mean `sendMessage`"),
        ("common", "http.patch('/x');\n", "http.patch", ""),
        ("gemini", "collections.set('a');\n", "collections.set", ""),
    ],
)
def test_a_call_the_adaptor_lacks_is_refused_with_a_did_you_mean(
    short: str, body: str, name: str, hint: str
) -> None:
    adaptor = _adaptor(short)
    [message] = _unknown(body, short)
    assert message.startswith(f"`{name}` is not a function of {adaptor.name}@{adaptor.version}")
    assert hint in message


def test_calls_inside_callbacks_and_without_an_adaptor_are_not_checked() -> None:
    body = "fn(state => { sendMail(); return state; });\n"
    assert check_job_code(body, _adaptor("msgraph")) == []
    assert check_job_code("sendMail({});\n") == []  # no adaptor: syntax and rules only


def test_each_unknown_call_is_reported_at_its_position() -> None:
    problems = check_job_code("get('/a');\nsendMail();\n  query();\n", _adaptor("msgraph"))
    assert [(p.rule, p.line, p.column) for p in problems] == [
        ("unknown_operation", 2, 1),
        ("unknown_operation", 3, 3),
    ]


def test_the_error_code_names_unknown_operations_only_when_that_is_all() -> None:
    msgraph = _adaptor("msgraph")
    assert problems_error_code(check_job_code("sendMail();\n", msgraph)) == "unknown_operation"
    mixed = check_job_code("sendMail();\nconst x = 1;\n", msgraph)
    assert problems_error_code(mixed) == "invalid_job_code"
    assert problems_error_code(check_job_code("get(\n", msgraph)) == "invalid_job_code"


DOC = """\
jobs:
  send:
    name: Send
    adaptor: '@openfn/language-msgraph@latest'
  odd:
    name: Odd
    adaptor: '@openfn/language-notinthecatalogue@latest'
"""


def test_stitching_refuses_a_call_the_steps_adaptor_lacks() -> None:
    doc = WorkflowDocument.from_yaml(DOC)
    result = stitch_job_code(doc, "send", "sendMail({ to: 'x' });\n")
    assert not result.ok and result.error_code == "unknown_operation"
    assert "sendMail" in result.text
    assert doc.to_yaml() == DOC
    assert stitch_job_code(doc, "send", "get('/me/messages');\n").ok


def test_a_step_whose_adaptor_the_catalogue_lacks_is_not_checked_for_operations() -> None:
    doc = WorkflowDocument.from_yaml(DOC)
    assert stitch_job_code(doc, "odd", "anything($.x);\n").ok
