"""Credential commands: attach a project credential to steps by adaptor or by name
(:mod:`agents.offline.credentials`).

Tried before the edge and step commands: "X should use credential Y" would otherwise
read as an adaptor change.
"""

from __future__ import annotations

from agents.offline import credentials
from agents.offline.rules.base import Example, Rule, parser

RULES = [
    Rule(
        "attach_credential",
        "steps",
        "command",
        parser(credentials.attach_credential),
        (),
        (
            Example(
                "use the payer-portal credential for the http steps",
                "`attach_credential` by adaptor: every http step runs with that credential "
                "(a name; its secrets stay in Lightning or the CLI's creds file)",
                ("attach_credential",),
                also=(
                    "attach credential payer-portal to all http steps",
                    "the http steps should use credential payer-portal",
                    "set the payer-portal credential on the steps that use http",
                ),
                says=("payer-portal",),
                menu="use the X credential for the http steps",
            ),
            Example(
                "check coverage should use the fhir-sandbox credential",
                "`attach_credential` on the steps named",
                ("attach_credential",),
                also=(
                    "set the credential of get referrals and check coverage to payer-portal",
                    "make check coverage use credential fhir-sandbox",
                ),
            ),
            Example(
                "use a credential for the http steps",
                "asks which credential; nothing changes",
                (),
                says=("Which credential",),
            ),
        ),
    ),
]
