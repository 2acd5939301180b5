"""Test runs on the web page, end to end: real headless Chromium, the real server, and
OpenFn's own runtime (the pinned npm ``@openfn/runtime`` with the real adaptors) in a
node subprocess (DESIGN §5c).

The Run panel runs the workflow on a sample (its live progress, the result, each
step's input, output and logs, the requests); the diagram colours each step by the
last run (ran / failed / skipped) with its output one click away; a failed run's Fix
button sends the errors-mode turn; invalid JSON is refused before anything is sent.
Screenshots go to test-artifacts/e2e/.
"""

from __future__ import annotations

import json
import re
from typing import Any

from playwright.sync_api import expect

from tests.e2e.helpers import OpenPage, screenshot
from tests.e2e.server import EDITOR, REVIEWER, LiveServer

RUN_TIMEOUT = 60_000  # ms: node starts, the runtime loads the adaptors

# Normalise sets a priority from the age, Look up patient asks the clinic's API, then
# one of two branches runs on the priority.
TRIAGE_DOC = """\
name: Referral triage
jobs:
  normalise:
    name: Normalise referral
    adaptor: '@openfn/language-common@latest'
    body: |
      fn(state => {
        console.log('age', state.data.age);
        return { ...state, priority: state.data.age > 65 ? 'high' : 'normal' };
      });
  lookup:
    name: Look up patient
    adaptor: '@openfn/language-http@latest'
    body: |
      get('https://clinic.example.org/patients/p1');
  escalate:
    name: Escalate
    adaptor: '@openfn/language-common@latest'
    body: |
      fn(state => ({ ...state, escalated: true }));
  queue:
    name: Queue for review
    adaptor: '@openfn/language-common@latest'
    body: |
      fn(state => ({ ...state, queued: true }));
triggers:
  webhook:
    type: webhook
    enabled: false
edges:
  webhook->normalise:
    source_trigger: webhook
    target_job: normalise
    condition_type: always
    enabled: true
  normalise->lookup:
    source_job: normalise
    target_job: lookup
    condition_type: on_job_success
    enabled: true
  lookup->escalate:
    source_job: lookup
    target_job: escalate
    condition_type: js_expression
    condition_expression: "!state.errors && state.priority === 'high'"
    condition_label: high priority
    enabled: true
  lookup->queue:
    source_job: lookup
    target_job: queue
    condition_type: js_expression
    condition_expression: "!state.errors && state.priority !== 'high'"
    condition_label: normal priority
    enabled: true
"""

PATIENT = {"id": "p1", "name": "Ana Lima"}
SAMPLES = [
    {
        "method": "GET",
        "url": "https://clinic.example.org/patients/*",
        "status": 200,
        "body": PATIENT,
    }
]


class Frames:
    """The chat socket's frames as the page sent and received them."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []

    def install(self, context: Any) -> None:
        context.on("page", lambda page: page.on("websocket", self._socket))

    def _socket(self, socket: Any) -> None:
        if "/ws" not in socket.url or "/watch" in socket.url:
            return
        socket.on("framesent", lambda payload: self.sent.append(json.loads(payload)))
        socket.on("framereceived", lambda payload: self.received.append(json.loads(payload)))

    def sent_of(self, kind: str) -> list[dict[str, Any]]:
        return [f for f in self.sent if f.get("type") == kind]

    def received_of(self, kind: str) -> list[dict[str, Any]]:
        return [f for f in self.received if f.get("type") == kind]


def run_session(
    server: LiveServer, open_page: OpenPage, *, token: str = EDITOR, review: bool = False
) -> tuple[Any, dict[str, Any], Frames]:
    created = server.create_workflow(EDITOR, yaml=TRIAGE_DOC)
    body: dict[str, Any] = {"workflow_id": created["id"], "read_only": token != EDITOR}
    if token == EDITOR:
        body["review"] = review
    session = server.request("POST", "/v1/sessions", token, json=body)
    frames = Frames()
    page = open_page(f"{server.url}/#session={session['id']}", token=token, setup=frames.install)
    page.wait_for_selector('.connection[data-state="open"]')
    return page, created, frames


def fill_run(page: Any, data: dict[str, Any], responses: list[dict[str, Any]] | None) -> None:
    page.click('.tab[data-tab="run"]')
    page.fill("#run-input", json.dumps({"data": data}, indent=2))
    page.fill("#run-responses", json.dumps(responses or []))


def run_keys(page: Any, status: str) -> list[str]:
    keys: list[str] = page.locator(f'.node.job[data-run="{status}"]').evaluate_all(
        "ns => ns.map(n => n.dataset.key)"
    )
    return sorted(keys)


def box_fill(page: Any, key: str) -> str:
    fill: str = page.locator(f'.node.job[data-key="{key}"] .node-box').evaluate(
        "r => getComputedStyle(r).fill"
    )
    return fill


def test_a_run_on_a_sample_shows_progress_result_and_colours_the_diagram(
    server: LiveServer, open_page: OpenPage
) -> None:
    page, created, frames = run_session(server, open_page)
    # Every run state a step box takes while the page shows the run, live ones included.
    page.evaluate(
        """() => {
          window.__runStates = new Set();
          new MutationObserver(() => {
            for (const n of document.querySelectorAll('.node.job[data-run]')) {
              window.__runStates.add(n.dataset.key + ':' + n.dataset.run);
            }
          }).observe(document.getElementById('diagram'), {subtree: true, childList: true});
        }"""
    )
    fill_run(page, {"age": 70}, SAMPLES)
    page.click("#run-button")
    result = page.locator('#run-result[data-status="succeeded"]')
    expect(result).to_be_visible(timeout=RUN_TIMEOUT)
    screenshot(page, "run-01-result")

    # The run went over the chat socket and streamed its progress.
    (sent,) = frames.sent_of("run")
    assert sent["input"] == {"data": {"age": 70}}
    assert sent["responses"] == SAMPLES
    progress = [(f["step_key"], f["status"]) for f in frames.received_of("run.progress")]
    assert ("normalise", "started") in progress and ("escalate", "succeeded") in progress
    seen = page.evaluate("() => [...window.__runStates]")
    assert "normalise:running" in seen or "lookup:running" in seen, seen  # live colouring

    steps = result.locator("li.run-step")
    expect(steps).to_have_count(3)
    assert steps.evaluate_all("ls => ls.map(l => l.dataset.key)") == [
        "normalise",
        "lookup",
        "escalate",
    ]
    expect(result.locator('li.run-step[data-status="succeeded"]')).to_have_count(3)
    expect(result.locator(".run-summary")).not_to_be_empty()
    expect(result.locator(".run-skipped")).to_have_text("Not run: Queue for review.")
    request = result.locator(".run-requests tbody tr")
    expect(request).to_have_count(1)
    expect(request).to_have_attribute("data-matched", "true")
    expect(request.locator(".request-url")).to_have_text(
        "GET https://clinic.example.org/patients/p1"
    )

    first = result.locator('li.run-step[data-key="normalise"]')
    first.locator("summary").click()
    expect(first.locator(".step-logs")).to_contain_text("age 70")
    expect(first.locator(".step-output")).to_contain_text('"priority": "high"')
    expect(first.locator(".step-input")).to_contain_text('"age": 70')
    screenshot(page, "run-02-step-detail")

    # The diagram: ran, skipped, visibly different, with a legend.
    page.click('.tab[data-tab="diagram"]')
    assert run_keys(page, "succeeded") == ["escalate", "lookup", "normalise"]
    assert run_keys(page, "skipped") == ["queue"]
    expect(page.locator("#run-legend")).to_be_visible()
    expect(page.locator("#run-bar")).to_contain_text("Last test run: Succeeded")
    assert box_fill(page, "lookup") != box_fill(page, "queue")

    # A step's output is one click away: its badge.
    page.locator('.run-badge[data-key="lookup"]').click()
    detail = page.locator('#step-run[data-key="lookup"]')
    expect(detail).to_be_visible()
    expect(detail.locator(".step-output")).to_contain_text("Ana Lima")
    expect(page.locator('.tab[data-tab="diagram"]')).to_have_attribute("aria-selected", "true")
    page.locator('.run-badge[data-key="queue"]').click()
    expect(page.locator('#step-run[data-key="queue"]')).to_contain_text("It did not run")
    screenshot(page, "run-03-diagram-coloured")

    # The run is stored with its version; after a reload the diagram shows it again.
    stored = server.request("GET", f"/v1/workflows/{created['id']}/runs", EDITOR)["runs"]
    assert [r["status"] for r in stored] == ["succeeded"] and stored[0]["version"] == 1
    page.reload()
    page.wait_for_selector('.connection[data-state="open"]')
    expect(page.locator('.node.job[data-key="escalate"][data-run="succeeded"]')).to_have_count(1)
    expect(page.locator('.node.job[data-key="queue"][data-run="skipped"]')).to_have_count(1)


def test_a_failed_run_is_coloured_and_its_fix_button_sends_an_errors_turn(
    server: LiveServer, open_page: OpenPage
) -> None:
    page, _, frames = run_session(server, open_page)
    fill_run(page, {"age": 30}, None)  # no sample response: the request gets an error
    page.click("#run-button")
    result = page.locator('#run-result[data-status="failed"]')
    expect(result).to_be_visible(timeout=RUN_TIMEOUT)
    failed = result.locator('li.run-step[data-status="failed"]')
    expect(failed).to_have_count(1)
    expect(failed).to_have_attribute("data-key", "lookup")
    request = result.locator(".run-requests tbody tr")
    expect(request).to_have_attribute("data-matched", "false")
    expect(request).to_contain_text("no sample response")
    screenshot(page, "run-04-failed")

    page.click('.tab[data-tab="diagram"]')
    assert run_keys(page, "succeeded") == ["normalise"]
    assert run_keys(page, "failed") == ["lookup"]
    assert run_keys(page, "skipped") == ["escalate", "queue"]
    assert len({box_fill(page, key) for key in ("normalise", "lookup", "queue")}) == 3
    page.locator('.run-badge[data-key="lookup"]').click()
    expect(page.locator('#step-run[data-key="lookup"] .step-error')).not_to_be_empty()

    fix = page.locator("#run-bar button.fix-run")
    expect(fix).to_be_enabled()
    fix.click()
    expect(page.locator(".msg.user .msg-body").last).to_have_text("Fix the failed test run")
    (turn,) = frames.sent_of("turn")
    assert turn["content"] == "Fix the failed test run"
    errors = turn["errors"]
    assert 'Failed step: "Look up patient" (key lookup)' in errors
    error_text = result.locator('li.run-step[data-key="lookup"] .step-error').text_content()
    assert error_text is not None
    assert error_text.removeprefix("Error: ") in errors
    assert '"age": 30' in errors  # the failed step's input state
    assert '"priority": "normal"' in errors
    page.wait_for_selector('body[data-turn="idle"]', timeout=30_000)
    expect(page.locator(".msg.assistant").last).not_to_be_empty()
    screenshot(page, "run-05-fix-sent")


def test_invalid_json_is_refused_before_anything_is_sent(
    server: LiveServer, open_page: OpenPage
) -> None:
    page, created, frames = run_session(server, open_page)
    page.click('.tab[data-tab="run"]')
    problem = page.locator("#run-problem")

    page.fill("#run-input", '{"data": {"age": 70,}}')
    page.click("#run-button")
    expect(problem).to_contain_text("The input is not valid JSON")
    expect(problem).to_contain_text("Nothing was run.")
    expect(page.locator("#run-input")).to_have_attribute("aria-invalid", "true")
    screenshot(page, "run-06-invalid-json")

    page.fill("#run-input", '["not", "a", "state"]')
    page.click("#run-button")
    expect(problem).to_contain_text("The input must be a JSON object")

    page.fill("#run-input", '{"data": {"age": 70}}')
    expect(page.locator("#run-input")).not_to_have_attribute("aria-invalid", "true")
    page.fill("#run-responses", '[{"method": "GET", "url": "https://a.example/*"')
    page.click("#run-button")
    expect(problem).to_contain_text("The sample responses is not valid JSON")
    expect(page.locator("#run-responses")).to_have_attribute("aria-invalid", "true")
    page.fill("#run-responses", '{"url": "https://a.example/*"}')
    page.click("#run-button")
    expect(problem).to_contain_text("must be a JSON list")
    page.fill("#run-responses", '[{"method": "GET", "status": 200}]')
    page.click("#run-button")
    expect(problem).to_contain_text('Sample response 1 needs a "url"')
    page.fill("#run-responses", '[{"url": "https://a.example/", "status": 999}]')
    page.click("#run-button")
    expect(problem).to_contain_text('"status" must be an HTTP status')

    # Nothing went to the server, and nothing ran.
    assert frames.sent_of("run") == []
    assert server.request("GET", f"/v1/workflows/{created['id']}/runs", EDITOR)["runs"] == []
    expect(page.locator("#run-result")).to_be_hidden()

    page.fill("#run-responses", json.dumps(SAMPLES))
    page.click("#run-button")
    expect(page.locator('#run-result[data-status="succeeded"]')).to_be_visible(timeout=RUN_TIMEOUT)
    expect(problem).to_be_empty()
    assert len(frames.sent_of("run")) == 1


def test_a_reviewer_runs_over_rest_without_a_socket_and_gets_no_fix_button(
    server: LiveServer, open_page: OpenPage
) -> None:
    page, created, frames = run_session(server, open_page, token=REVIEWER)
    expect(page.locator("#mode-badge")).to_have_text("Read-only")
    page.evaluate("() => window.planwright.state.chatSocket.stop()")  # no chat socket
    fill_run(page, {"age": 30}, None)
    page.click("#run-button")
    result = page.locator('#run-result[data-status="failed"]')
    expect(result).to_be_visible(timeout=RUN_TIMEOUT)
    assert frames.sent_of("run") == []  # it went over POST /v1/workflows/{id}/runs
    stored = server.request("GET", f"/v1/workflows/{created['id']}/runs", EDITOR)["runs"]
    assert len(stored) == 1 and stored[0]["run_id"] == result.get_attribute("data-run-id")
    expect(page.locator("button.fix-run")).to_have_count(0)  # reviewers cannot edit
    page.click('.tab[data-tab="diagram"]')
    assert run_keys(page, "failed") == ["lookup"]
    expect(page.locator("#run-bar")).to_contain_text(re.compile("Last test run: Failed"))


def test_test_it_in_chat_streams_its_run_into_the_panel_and_the_diagram(
    server: LiveServer, open_page: OpenPage
) -> None:
    page, created, frames = run_session(server, open_page, review=True)
    page.fill("#chat-input", 'test it with {"data": {"age": 70}}')
    page.press("#chat-input", "Enter")
    page.wait_for_selector('.node.job[data-key="lookup"][data-run="failed"]', timeout=RUN_TIMEOUT)
    page.wait_for_selector('body[data-turn="idle"]', timeout=30_000)
    # The planner's test_run tool ran it inside the turn; the page sent no run frame.
    assert frames.sent_of("run") == []
    (completed,) = frames.received_of("run.completed")
    assert completed["turn_id"] == frames.received_of("turn.started")[0]["turn_id"]
    assert run_keys(page, "succeeded") == ["normalise"]
    assert run_keys(page, "skipped") == ["escalate", "queue"]
    expect(page.locator(".review-card")).to_have_count(0)  # a run changes nothing
    page.click('.tab[data-tab="run"]')
    result = page.locator(f'#run-result[data-run-id="{completed["run"]["run_id"]}"]')
    expect(result).to_have_attribute("data-status", "failed")
    expect(result.locator(".run-requests tbody tr")).to_have_attribute("data-matched", "false")
    expect(page.locator("#run-button")).to_be_enabled()
    expect(result.locator("button.fix-run")).to_be_enabled()
    assert server.request("GET", f"/v1/workflows/{created['id']}", EDITOR)["version"] == 1
    screenshot(page, "run-07-from-chat")


def test_while_a_proposal_waits_run_tests_its_draft_on_the_sample(
    server: LiveServer, open_page: OpenPage
) -> None:
    """A domain expert watches the proposed change run before accepting it: the Run
    button runs the draft (the server's choice while a proposal is open), the diagram
    shows the draft coloured by that run, and nothing is applied."""
    page, created, frames = run_session(server, open_page, review=True)
    page.fill("#chat-input", "add a step called Dedupe with common after Normalise referral")
    page.press("#chat-input", "Enter")
    card = page.locator(".review-card:not([data-answer])")
    expect(card).to_be_visible(timeout=30_000)
    page.wait_for_selector('body[data-turn="review"]')

    fill_run(page, {"age": 70}, SAMPLES)
    expect(page.locator("#run-button")).to_have_text("Run the proposed draft")
    expect(page.locator("#run-target")).to_contain_text("tests its draft")
    expect(page.locator("#run-target")).to_contain_text("on version 1")
    card.locator("button.preview").click()  # the head on the diagram: a run shows the draft
    expect(page.locator("#draft-bar")).to_be_hidden()
    page.click("#run-button")
    result = page.locator("#run-result[data-status]")
    expect(result).to_be_visible(timeout=RUN_TIMEOUT)
    (sent,) = frames.sent_of("run")
    assert "version" not in sent  # the server runs the open proposal's draft
    (completed,) = frames.received_of("run.completed")
    run = completed["run"]
    assert (run["draft"], run["version"]) == (True, 1)
    assert "dedupe" in [step["key"] for step in run["steps"]]
    expect(result.locator(".run-head .chip")).to_have_text("draft of version 1")
    screenshot(page, "run-08-draft-of-a-proposal")

    page.click('.tab[data-tab="diagram"]')
    expect(page.locator("#draft-bar")).to_contain_text("Draft, not applied")
    expect(page.locator('.node.job[data-key="dedupe"]')).to_have_attribute("data-run", "succeeded")
    expect(page.locator("#run-bar")).to_contain_text("ran on the proposed draft of version 1")
    assert server.request("GET", f"/v1/workflows/{created['id']}", EDITOR)["version"] == 1
    expect(card).to_be_visible()  # still waiting for its answer

    card.locator("button.reject").click()
    page.wait_for_selector('body[data-turn="idle"]')
    page.click('.tab[data-tab="run"]')
    expect(page.locator("#run-target")).to_be_hidden()
    expect(page.locator("#run-button")).to_have_text("Run again")  # the current version again
