"""Offline starter code only calls what the step's adaptor has, for every adaptor."""

from __future__ import annotations

import pytest

from agents.offline.codegen import minimal_code, starter_code
from tools.catalogue.adaptors import load_catalogue
from tools.jobcode import check_job_code

REQUESTS = ["fetch the patients", "send the records", "transform the data", "get and post them", ""]


@pytest.mark.parametrize("name", load_catalogue().names())
def test_starter_and_minimal_code_pass_the_adaptor_check(name: str) -> None:
    adaptor = load_catalogue().get(name)
    assert adaptor is not None
    functions = [
        {"name": f.name, "params": list(f.params), "description": f.description}
        for f in adaptor.functions
    ]
    for request in REQUESTS:
        code = starter_code({"name": "Step", "adaptor": name}, functions, request)
        assert check_job_code(code, adaptor) == [], (request, code)
    assert check_job_code(minimal_code("Step", "why", name), adaptor) == []


def test_minimal_code_has_no_fn_where_the_adaptor_has_none() -> None:
    assert "fn(" not in minimal_code("Store", "", "@openfn/language-collections")
    assert "fn(state => state);" in minimal_code("Fetch", "", "@openfn/language-http")
