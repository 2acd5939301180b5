"""The offline model's starter code and its edge conditions agree on ``state``.

The conditions it writes read ``state.data.<field>`` behind the runtime's success
guard; the starter code must leave ``state.data`` in that shape (it used to wrap
it in an array, so ``state.data.plan`` was always undefined) and pass payloads
as functions of state, never as the strings ``'DATA'``/``'RECORD'``.

The shape check runs the generated body in node the way ``@openfn/runtime``
does, without the npm packages: every top-level call becomes one operation, run
in order on the state (adaptor operations are stubs that hand state on
unchanged, as a mock server that echoes the data would; ``fn`` runs its
callback); then each condition is compiled as the runtime compiles it,
``return <expression>`` in a function of ``(state, upstreamStepId)``. Needs node
(CI has it); when it is missing the test fails, it never skips.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from typing import Any

import pytest

from agents.offline.codegen import starter_code
from agents.offline.conditions import parse_condition
from tools.catalogue.adaptors import load_catalogue
from tools.document.conditions import expression_problem
from tools.jobcode import check_job_code, top_level_operations

_RUNNER = r"""
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const operations = [];
const stub = () => operations.push(state => state);
// The job's own logging goes to stderr: stdout carries the result.
const log = (...args) => process.stderr.write(args.join(' ') + '\n');
const scope = { fn: f => operations.push(state => f(state)), console: { log } };
for (const name of input.names) {
  const [head, tail] = name.split('.');
  if (head === 'fn') continue;
  if (tail) (scope[head] ||= {})[tail] = stub;
  else scope[head] = stub;
}
new Function(...Object.keys(scope), input.body)(...Object.values(scope));
const run = async state => {
  for (const operation of operations) state = await operation(state);
  return state;
};
const decide = (state, expression) =>
  Boolean(new Function('state', 'upstreamStepId', `return ${expression}`)(state, 'check'));
(async () => {
  const out = {};
  for (const [name, start] of Object.entries(input.states)) {
    const state = await run(JSON.parse(JSON.stringify(start)));
    out[name] = { data: state.data, taken: input.conditions.map(c => decide(state, c)) };
  }
  // A failed step: the runtime records the error and checks the edges on that state.
  const failed = { ...input.states.match, errors: { check: { message: 'boom' } } };
  out.failed = { taken: input.conditions.map(c => decide(failed, c)) };
  process.stdout.write(JSON.stringify(out));
})();
"""


def _functions(adaptor: str) -> list[dict[str, Any]]:
    entry = load_catalogue().adaptors[adaptor]
    return [{"name": f.name, "params": list(f.params)} for f in entry.functions]


def _run_in_node(body: str, conditions: list[str], states: dict[str, Any]) -> dict[str, Any]:
    node = shutil.which("node")
    assert node is not None, "node is needed to run job code (CI has it)"
    payload = {
        "body": body,
        "names": top_level_operations(body),
        "conditions": conditions,
        "states": states,
    }
    done = subprocess.run(
        [node, "-e", _RUNNER],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize(
    ("adaptor", "request_text"),
    [
        ("@openfn/language-common", "check the insurance"),
        ("@openfn/language-http", "fetch the coverage from /api/coverage"),
        ("@openfn/language-http", "fetch referrals and post them to https://example.org/api"),
    ],
)
def test_starter_code_keeps_the_shape_the_conditions_read(adaptor: str, request_text: str) -> None:
    job = {"key": "check", "name": "Check insurance", "adaptor": f"{adaptor}@latest"}
    body = starter_code(job, _functions(adaptor), request_text)
    assert check_job_code(body) == [], body
    condition = parse_condition("if the plan is BlueCross HMO")
    assert condition is not None
    conditions = [str(condition.edge_expression), str(condition.negated().edge_expression)]
    assert all(expression_problem(c) is None for c in conditions), conditions
    states = {
        "match": {"data": {"plan": "BlueCross HMO", "patient": "p1"}},
        "other": {"data": {"plan": "Aetna PPO"}},
    }
    out = _run_in_node(body, conditions, states)
    # The object stays an object: the fields the conditions read are where they were.
    assert out["match"]["data"] == states["match"]["data"]
    assert out["match"]["taken"] == [True, False]
    assert out["other"]["taken"] == [False, True]
    # On failure neither the branch nor its "otherwise" runs.
    assert out["failed"]["taken"] == [False, False]


_PAYLOAD_WORDS = "data body record records values payload sendData mail fields entries rows members"


@pytest.mark.parametrize("adaptor", sorted(load_catalogue().adaptors))
def test_payload_arguments_are_functions_of_state(adaptor: str) -> None:
    """A parameter named like a payload is filled with ``state => state.data``."""
    functions = _functions(adaptor)
    job = {"key": "step", "name": "Sync records", "adaptor": f"{adaptor}@latest"}
    placeholders = {re.sub(r"(?<!^)(?=[A-Z])", "_", w).upper() for w in _PAYLOAD_WORDS.split()}
    for request_text in ("send the records to the registry", "fetch the patients and post them"):
        body = starter_code(job, functions, request_text)
        literals = set(re.findall(r"'([A-Z_]+)'", body))
        assert not literals & placeholders, (adaptor, body)
        called = {f["name"]: f["params"] for f in functions}
        for name in top_level_operations(body):
            params = called.get(name) or []
            if any(p in _PAYLOAD_WORDS.split() for p in params):
                assert re.search(r"state => (?:JSON\.stringify\()?state\.data", body), body


@pytest.mark.parametrize("adaptor", sorted(load_catalogue().adaptors))
def test_no_operation_is_called_without_the_arguments_it_needs(adaptor: str) -> None:
    """A function whose parameters the facts do not list (namespaced ones, or e.g.
    fhir-ndr-et's ``create``) is never called as ``name()``: that cannot run."""
    functions = _functions(adaptor)
    params = {f["name"]: f["params"] for f in functions}
    job = {"key": "step", "name": "Check insurance", "adaptor": f"{adaptor}@latest"}
    for request_text in ("fetch the patients and post them", "check the insurance", ""):
        body = starter_code(job, functions, request_text)
        for name in top_level_operations(body):
            if name != "fn":
                assert params.get(name), (adaptor, name, body)


def test_http_bodies_are_json_so_an_array_of_records_can_be_sent() -> None:
    """language-common's request encoder passes an array body to undici unencoded (the
    POST fails); language-http sends JSON by default, so its body is a JSON string."""
    body = starter_code(
        {"key": "s", "name": "Save orders", "adaptor": "@openfn/language-http@latest"},
        _functions("@openfn/language-http"),
        "post the orders to /api/orders",
    )
    assert "post('/api/orders', state => JSON.stringify(state.data));" in body, body


def test_the_request_noun_skips_articles() -> None:
    """'fetch the patients' names the resource 'patients', not 'the'."""
    body = starter_code(
        {"key": "s", "name": "Fetch patients", "adaptor": "@openfn/language-http@latest"},
        _functions("@openfn/language-http"),
        "fetch the patients",
    )
    assert "get('patients')" in body or "get('Patient')" in body, body
    assert "'the'" not in body
