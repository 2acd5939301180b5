"""External check: adaptor pins and credentials survive edits and a round trip through
``@openfn/project`` (the pinned package loads our Lightning export and writes it back).

A workflow is built and edited with the tools as the planner would (new steps pinned to
the version the adaptor facts list as current, ``@latest`` only where asked, a rename,
an adaptor named again without a version, a credential attached by adaptor); its export
goes through the package; the steps the package builds keep every pin and name the
credential as Lightning does (``owner|name``), the package's own project.yaml lists the
credential the same way, and importing that file gives back the same pins and names.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.external.openfn_harness import load_with_openfn
from tests.tools.helpers import make_context, ok, pinned
from tools.credentials import Credential
from tools.document import WorkflowDocument
from tools.document.openfn import from_lightning_yaml, to_lightning_yaml
from tools.registry import run_tool

pytestmark = pytest.mark.external

PORTAL = Credential.model_validate(
    {
        "name": "payer-portal",
        "schema": "http",
        "owner": "ana@clinic.example",
        "fields": {"baseUrl": "https://payer.example"},
    }
)


def _edited() -> WorkflowDocument:
    ctx = dataclasses.replace(make_context(), credentials={PORTAL.name: PORTAL})
    doc = WorkflowDocument.new()
    ok(
        doc,
        "create_workflow",
        {
            "name": "Claims",
            "jobs": [
                {"name": "Get claims", "adaptor": "http"},
                {"name": "Check coverage", "adaptor": "fhir"},
                {"name": "Notify", "adaptor": "gmail@latest"},
            ],
            "edges": [
                {"source": "get-claims", "target": "check-coverage"},
                {"source": "check-coverage", "target": "notify"},
            ],
            "trigger": {"type": "webhook"},
        },
        ctx,
    )
    ok(doc, "update_jobs", {"jobs": [{"key": "get-claims", "name": "Fetch claims"}]}, ctx)
    # Naming the same package again without a version keeps its pin ("no change").
    same = run_tool(
        doc, "update_jobs", {"jobs": [{"key": "check-coverage", "adaptor": "fhir"}]}, context=ctx
    )
    assert same.error_code == "no_change"
    ok(doc, "add_jobs", {"jobs": [{"name": "Post result", "adaptor": "http"}]}, ctx)
    ok(doc, "add_edges", {"edges": [{"source": "notify", "target": "post-result"}]}, ctx)
    ok(doc, "attach_credential", {"credential": "payer-portal", "adaptor": "http"}, ctx)
    return doc


def test_pins_and_credentials_survive_edits_and_the_package(openfn_cache: Path) -> None:
    doc = _edited()
    adaptors = {job.name: job.adaptor for job in doc.structure.jobs.values()}
    assert adaptors == {
        "Fetch claims": pinned("http"),
        "Check coverage": pinned("fhir"),
        "Notify": "@openfn/language-gmail@latest",
        "Post result": pinned("http"),
    }

    text = to_lightning_yaml([doc], project_name="Claims", credentials={PORTAL.name: PORTAL})
    loaded = load_with_openfn(text, openfn_cache, spec=True)
    (built,) = loaded["workflows"]
    steps = {s["name"]: s for s in built["steps"] if s["kind"] == "job"}
    assert {name: s["adaptor"] for name, s in steps.items()} == adaptors
    assert {name: s["extra"].get("configuration") for name, s in steps.items()} == {
        "Fetch claims": "ana@clinic.example|payer-portal",
        "Check coverage": None,
        "Notify": None,
        "Post result": "ana@clinic.example|payer-portal",
    }

    spec = YAML(typ="safe").load(loaded["spec_yaml"])
    assert spec["credentials"] == {
        "ana@clinic.example|payer-portal": {"name": "payer-portal", "owner": "ana@clinic.example"}
    }
    (back,) = from_lightning_yaml(loaded["spec_yaml"], new_id=make_context().new_id)
    assert {j.name: j.adaptor for j in back.structure.jobs.values()} == adaptors
    assert {j.name: j.credential for j in back.structure.jobs.values()} == {
        "Fetch claims": "ana@clinic.example|payer-portal",
        "Check coverage": None,
        "Notify": None,
        "Post result": "ana@clinic.example|payer-portal",
    }
