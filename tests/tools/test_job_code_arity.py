"""Adaptor calls against the parameter lists the adaptor facts publish (tools/jobcode/arity)."""

from __future__ import annotations

import pytest

from tools.catalogue.adaptors import load_catalogue
from tools.jobcode import check_job_code

CATALOGUE = load_catalogue()
HTTP = CATALOGUE.get("http")
FHIR = CATALOGUE.get("fhir")
COMMON = CATALOGUE.get("common")


def rules(body: str, adaptor: str = "http", version: str | None = None) -> list[str]:
    return [p.rule for p in check_job_code(body, CATALOGUE.get(adaptor), version=version)]


def test_a_post_without_its_body_is_a_lint_error_naming_the_signature() -> None:
    assert HTTP is not None
    [problem] = check_job_code("post('orders');", HTTP)
    assert (problem.kind, problem.rule, problem.line, problem.column) == (
        "lint",
        "wrong_arity",
        1,
        1,
    )
    assert problem.message == (
        f"`post` needs `data` (given 1 argument): {HTTP.name}@{HTTP.version} publishes "
        "post(path, data, options)"
    )


def test_too_many_arguments_point_at_the_first_extra_one() -> None:
    [problem] = check_job_code("get('orders', {}, state => state);", HTTP)
    assert problem.rule == "wrong_arity"
    assert problem.column == len("get('orders', {}, ") + 1
    assert "`get` takes at most 2 arguments but is given 3" in problem.message


def test_an_object_where_the_path_goes_is_the_wrong_kind() -> None:
    problems = check_job_code("post({ url: '/orders', body: state.data }, {});", HTTP)
    assert [p.rule for p in problems] == ["wrong_argument_kind"]
    assert "argument 1 of `post` is `path`, a string" in problems[0].message
    assert "not an object" in problems[0].message


@pytest.mark.parametrize(
    ("body", "adaptor"),
    [
        ("get('orders');", "http"),
        ("get(state => `orders/${state.data.id}`, { query: { a: 1 } });", "http"),
        ("post('orders', state => state.data);", "http"),
        ("post('orders', state => state.data, { headers: {} });", "http"),
        ("request('GET', 'orders');", "http"),
        ("each('$.items[*]', post('orders', state => state.data));", "http"),
        ("post(...state.args);", "http"),
        ("get('Coverage');", "fhir"),
        ("create('Patient', state => state.data);", "fhir"),
        ("log('a', 'b', 'c', 'd');", "common"),
        ("combine(fn(s => s), fn(s => s), fn(s => s));", "common"),
        ("fn(state => { post(); return state; });", "http"),
    ],
)
def test_calls_that_match_the_published_signature_pass(body: str, adaptor: str) -> None:
    assert rules(body, adaptor) == []


@pytest.mark.parametrize(
    ("body", "adaptor", "rule"),
    [
        ("post('orders', state => state.data, {}, state => state);", "http", "wrong_arity"),
        ("get();", "http", "wrong_arity"),
        ("request('GET');", "http", "wrong_arity"),
        ("get(42);", "http", "wrong_argument_kind"),
        ("get(['orders']);", "http", "wrong_argument_kind"),
        ("create({ resourceType: 'Patient' });", "fhir", "wrong_arity"),
        ("each('$.items[*]', post('orders'));", "http", "wrong_arity"),
        ("fn();", "common", "wrong_arity"),
    ],
)
def test_calls_that_do_not_match_are_refused(body: str, adaptor: str, rule: str) -> None:
    assert rule in rules(body, adaptor)


def test_another_major_version_is_not_checked_against_these_signatures() -> None:
    # language-http 6 published post(path, params, callback): its own signatures apply.
    body = "post('orders', { body: state.data }, state => state, 4);"
    assert rules(body, "http", version="6.5.1") == []
    assert rules(body, "http", version="latest") == ["wrong_arity"]
    assert HTTP is not None
    assert rules(body, "http", version=HTTP.version) == ["wrong_arity"]
