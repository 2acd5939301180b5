"""Helpers the external OpenFn checks share: the documents checked against
@openfn/project, the expected steps of our own file, and a loopback stand-in for
Lightning's webhooks."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REFERRAL_INTAKE = """\
name: Referral intake
jobs:
  check-coverage:                       # job key: stable, referenced by edges
    id: 7d0e9b2c-44f1-4e0e-8d7a-0c3f8f0a2222
    name: Check coverage                # display name
    adaptor: '@openfn/language-fhir@latest'
    body: |
      get('Coverage', { query: { patient: $.patientId } });
    x-reviewed-by: planwright           # unknown field: must survive
  notify:
    id: 7d0e9b2c-44f1-4e0e-8d7a-0c3f8f0a3333
    name: Notify
    adaptor: '@openfn/language-http@latest'
    body: "// Add operations here"
  log-failure:
    id: 7d0e9b2c-44f1-4e0e-8d7a-0c3f8f0a5555
    name: Log failure
    adaptor: '@openfn/language-common@latest'
    body: |
      fn(state => { console.log(state.errors); return state; });
  archive:
    id: 7d0e9b2c-44f1-4e0e-8d7a-0c3f8f0a6666
    name: Archive
    adaptor: '@openfn/language-common@1.14.0'
    body: |
      fn(state => state);
triggers:
  webhook:
    id: 0a9b8c7d-6e5f-4d3c-2b1a-0c3f8f0a4444
    type: webhook
    enabled: false
edges:
  webhook->check-coverage:
    id: 11111111-2222-4333-8444-555555555555
    source_trigger: webhook             # exactly one of source_trigger / source_job
    target_job: check-coverage
    condition_type: always
    enabled: true
  check-coverage->notify:
    id: 11111111-2222-4333-8444-555555555556
    source_job: check-coverage
    target_job: notify
    condition_type: js_expression
    condition_expression: "!state.errors"
    condition_label: no errors
    enabled: true
  check-coverage->log-failure:
    id: 11111111-2222-4333-8444-555555555557
    source_job: check-coverage
    target_job: log-failure
    condition_type: on_job_failure
    enabled: true
  notify->archive:
    id: 11111111-2222-4333-8444-555555555558
    source_job: notify
    target_job: archive
    condition_type: on_job_success
    enabled: false
"""


DAILY_DIGEST_CRON = """\
name: Daily digest
jobs:
  fetch-referrals:
    id: 3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e01
    name: Fetch referrals
    adaptor: '@openfn/language-http@latest'
    body: |
      get('/referrals', { query: { since: $.lastRunAt } });
  send-digest:
    id: 3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e02
    name: Send digest
    adaptor: '@openfn/language-mailgun@latest'
    body: "// Add operations here"
triggers:
  cron:
    id: 3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e03
    type: cron
    enabled: false
    cron_expression: "0 7 * * 1-5"
    cron_cursor_job_id: 3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e01
edges:
  cron->fetch-referrals:
    id: 3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e04
    source_trigger: cron
    target_job: fetch-referrals
    condition_type: always
    enabled: true
  fetch-referrals->send-digest:
    id: 3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e05
    source_job: fetch-referrals
    target_job: send-digest
    condition_type: on_job_success
    enabled: true
"""


# Job keys that are not the slug of the display name: @openfn/project names
# steps after slugify(name), so edges must still land on the right steps.
KEYS_DIFFER_FROM_NAMES = """\
name: Keys differ from names
jobs:
  step_1:
    id: 9a8b7c6d-1111-4222-8333-944444444401
    name: Validate Payload (v2)
    adaptor: '@openfn/language-common@latest'
    body: "fn(state => state);"
  step_2:
    id: 9a8b7c6d-1111-4222-8333-944444444402
    name: Upsert patient
    adaptor: '@openfn/language-fhir@latest'
    body: "fn(state => state);"
triggers:
  inbound:
    id: 9a8b7c6d-1111-4222-8333-944444444403
    type: webhook
    enabled: true
edges:
  inbound->step_1:
    id: 9a8b7c6d-1111-4222-8333-944444444404
    source_trigger: inbound
    target_job: step_1
    condition_type: always
    enabled: true
  step_1->step_2:
    id: 9a8b7c6d-1111-4222-8333-944444444405
    source_job: step_1
    target_job: step_2
    condition_type: js_expression
    condition_expression: |
      state.data.resourceType === 'Patient'
    enabled: true
"""


DOCUMENTS: list[tuple[str, str]] = [
    ("referral-intake", REFERRAL_INTAKE),
    ("daily-digest-cron", DAILY_DIGEST_CRON),
    ("keys-differ-from-names", KEYS_DIFFER_FROM_NAMES),
]


def _built_by_tools() -> list[tuple[str, str]]:
    """Documents produced by Planwright's own edit tools, the ones users really get."""
    from tests.tools.helpers import build, make_context

    sop = build(
        [
            (
                "create_workflow",
                {
                    "name": "Referral intake SOP",
                    "jobs": [
                        {"name": "Pull referral", "adaptor": "http"},
                        {"name": "Check insurance", "adaptor": "fhir"},
                        {"name": "Request prior auth", "adaptor": "http"},
                        {"name": "Schedule visit", "adaptor": "fhir"},
                        {"name": "Alert coordinator", "adaptor": "gmail"},
                    ],
                    "edges": [
                        {"source": "pull-referral", "target": "check-insurance"},
                        {
                            "source": "check-insurance",
                            "target": "request-prior-auth",
                            "condition_expression": "state.data.plan === 'BlueCross HMO'",
                            "condition_label": "BlueCross HMO",
                        },
                        {
                            "source": "check-insurance",
                            "target": "schedule-visit",
                            "condition_expression": "state.data.plan !== 'BlueCross HMO'",
                        },
                        {
                            "source": "check-insurance",
                            "target": "alert-coordinator",
                            "condition_type": "on_job_failure",
                        },
                    ],
                    "trigger": {"type": "webhook"},
                },
            ),
            ("update_jobs", {"jobs": [{"key": "schedule-visit", "new_key": "book-visit"}]}),
            ("add_jobs", {"jobs": [{"name": "Dedupe referral", "adaptor": "common"}]}),
            ("remove_edges", {"edges": [{"source": "pull-referral", "target": "check-insurance"}]}),
            (
                "add_edges",
                {
                    "edges": [
                        {"source": "pull-referral", "target": "dedupe-referral"},
                        {"source": "dedupe-referral", "target": "check-insurance"},
                    ]
                },
            ),
            ("set_trigger", {"type": "cron", "cron_expression": "30 7 * * 1-5", "enabled": True}),
        ],
        make_context(),
    )
    return [("tools-built-sop", sop.to_yaml())]


def documents_under_test() -> list[tuple[str, str]]:
    """``(id, yaml_text)`` pairs checked against @openfn/project; extend freely."""
    return [*DOCUMENTS, *_built_by_tools()]


@dataclass(frozen=True)
class Arrival:
    method: str
    path: str
    content_type: str | None
    body: Any


@dataclass
class LightningWebhooks:
    """A loopback stand-in for Lightning's webhook endpoint: records every request and
    answers as a webhook trigger does (200, the work order it created)."""

    arrivals: list[Arrival] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> LightningWebhooks:
        arrivals = self.arrivals

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw) if raw else None
                arrivals.append(Arrival("POST", self.path, self.headers.get("Content-Type"), body))
                payload = json.dumps({"work_order_id": f"wo-{len(arrivals)}"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def with_credentials(plan: dict[str, Any], credentials: dict[str, Any]) -> dict[str, Any]:
    """``plan`` with each step's credential name replaced by its configuration, as the
    CLI's credential map does; a name the map lacks is an error, never a silent ``{}``."""
    steps = []
    for step in plan["steps"]:
        name = step.get("configuration")
        if isinstance(name, str):
            assert name in credentials, f"step {step['id']} names unknown credential {name!r}"
            step = {**step, "configuration": credentials[name]}
        steps.append(step)
    return {**plan, "steps": steps}


# Everything the export writes: a credential, webhook reply settings, a cron
# cursor, a disabled edge, labels, a js condition with a leading blank line,
# names whose slugs keep '_' and drop ' - '.
CRON_WITH_CURSOR = """\
name: Nightly sync_v2
jobs:
  pull:
    id: 11111111-0000-4000-8000-000000000001
    name: Pull rows
    adaptor: '@openfn/language-http@latest'
    credential: warehouse-api
    body: |
      get('/rows');
      fn(state => ({ ...state, count: state.data.length }));
  push:
    id: 11111111-0000-4000-8000-000000000002
    name: Push - rows
    adaptor: '@openfn/language-postgresql@latest'
triggers:
  nightly:
    id: 11111111-0000-4000-8000-000000000003
    type: cron
    enabled: true
    cron_expression: '0 2 * * *'
    cron_cursor_job_id: 11111111-0000-4000-8000-000000000001
edges:
  nightly->pull:
    id: 11111111-0000-4000-8000-000000000004
    source_trigger: nightly
    target_job: pull
    condition_type: always
    enabled: true
  pull->push:
    id: 11111111-0000-4000-8000-000000000005
    source_job: pull
    target_job: push
    condition_type: js_expression
    condition_expression: '!state.errors && state.count > 0'
    condition_label: rows to push
    enabled: true
"""


def expected_steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps the package should build from one workflow of *our file*: triggers
    then jobs, each keyed id, ``next`` from the edges (independent of our exporter)."""
    steps: dict[str, dict[str, Any]] = {}
    for key, trigger in workflow["triggers"].items():
        extra = {
            k: v for k, v in trigger.items() if k not in ("type", "enabled", "cron_expression")
        }
        steps[key] = {
            "id": key,
            "kind": "trigger",
            "type": trigger["type"],
            "enabled": trigger["enabled"],
            "cron_expression": trigger.get("cron_expression"),
            "extra": dict(sorted(extra.items())),
            "next": {},
        }
    for key, job in workflow["jobs"].items():
        extra = {"configuration": job["credential"]} if "credential" in job else {}
        steps[key] = {
            "id": key,
            "kind": "job",
            "name": job["name"],
            "adaptor": job["adaptor"],
            "expression": job["body"],
            "extra": extra,
            "next": {},
        }
    for key, edge in workflow["edges"].items():
        source = edge.get("source_job") or edge["source_trigger"]
        assert key == f"{source}->{edge['target_job']}"
        condition = (
            edge["condition_expression"]
            if edge["condition_type"] == "js_expression"
            else edge["condition_type"]
        )
        steps[source]["next"][edge["target_job"]] = {
            "condition": condition,
            "disabled": not edge["enabled"],
            "label": edge.get("condition_label"),
        }
    return list(steps.values())
