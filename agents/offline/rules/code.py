"""Requests for step code (:mod:`agents.offline.code_requests`): one
``call_job_code_agent`` per step; the code agent writes starter code from the
adaptor's function signatures.
"""

from __future__ import annotations

from agents.offline.code_requests import code_request
from agents.offline.rules.base import Example, Rule, parser

RULES = [
    Rule(
        "code",
        "code",
        "command",
        parser(code_request),
        (),
        (
            Example(
                "write the code for check coverage to fetch the Coverage for the patient",
                "`call_job_code_agent` for that step, which writes starter code",
                tools=("call_job_code_agent", "edit_job_code"),
                menu="write the code for A to fetch patients",
            ),
            Example(
                "make fetch patients get /patients",
                "the same (`implement X`, `make X <verb> …`)",
                also=("implement transform data",),
                doc="chain",
                tools=("call_job_code_agent", "edit_job_code"),
            ),
            Example(
                "write code for all steps",
                "one `call_job_code_agent` per step without code (and says which it skipped)",
                also=("write the missing code",),
                doc="chain",
                tools=("call_job_code_agent",) * 3 + ("edit_job_code",) * 3,
            ),
            Example(
                "write code that fetches the coverage",
                "on a step's page, about that step: straight to the code agent",
                job_key="check-coverage",
                tools=("edit_job_code",),
            ),
        ),
    ),
]
