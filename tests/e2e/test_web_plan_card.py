"""The plan card and the project pane in real headless Chromium, fed canned frames.

The page and its assets come from the real server; the project session's REST
answers and its WebSocket are Playwright routes playing the plan-mode protocol
(DESIGN §5a), so each frame shape (a delta, a failed workflow, hostile text, a
read-only reviewer) is shown exactly, whatever the planner would propose.
test_web_plan.py runs the same flows against the real server end to end.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.helpers import OpenPage, screenshot
from tests.e2e.server import LiveServer

HOSTILE = '<img src=x onerror="window.__pwned=1">'
NOW = "2026-12-02T04:00:00Z"
NO_ADAPTOR = "the step 'Check' has no adaptor"


def planned(key: str, name: str, depends_on: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "key": key,
        "name": name,
        "purpose": f"{name} for each referral.",
        "trigger": extra.pop("trigger", {"type": "webhook", "cron_expression": None}),
        "inputs": extra.pop("inputs", ["referral"]),
        "outputs": extra.pop("outputs", [f"{key}-result"]),
        "depends_on": depends_on,
        "steps": extra.pop("steps", [f"Do {name.lower()}", "Record the result"]),
    }


PLAN: dict[str, Any] = {
    "summary": "Four workflows: intake, then coverage and documents, then the decision.",
    "workflows": [
        planned("decision", "Referral decision", ["coverage-check", "document-check"]),
        planned("intake", "Referral intake", [], inputs=[]),
        planned("coverage-check", "Coverage check", ["intake"]),
        planned("document-check", "Document verification", ["intake"]),
    ],
    "order": ["intake", "coverage-check", "document-check", "decision"],
}
CONTRACTS = [
    {
        "source": "intake",
        "target": "coverage-check",
        "data": ["referral"],
        "via": "webhook",
        "webhook_path": "referrals-coverage-check",
    },
    {
        "source": "coverage-check",
        "target": "decision",
        "data": ["coverage-check-result"],
        "via": "webhook",
        "webhook_path": "referrals-decision",
    },
]


class FakeProject:
    """The REST answers and the chat socket of one project session, as the server would
    give them; ``answers`` records each confirm frame the page sent."""

    def __init__(self, *, read_only: bool = False) -> None:
        self.read_only = read_only
        self.project: dict[str, Any] = {
            "id": "p1",
            "name": "Referral system",
            "workflows": [],
            "plan": None,
            "created_at": "2026-12-02T04:00:00Z",
            "updated_at": "2026-12-02T04:00:00Z",
        }
        self.pending: dict[str, Any] | None = None
        self.turns: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []
        self.answers: list[dict[str, Any]] = []
        self.plan = copy.deepcopy(PLAN)
        self.delta: dict[str, Any] | None = None
        self.fail: set[str] = set()
        self.stall = False
        self.queue: Iterator[dict[str, Any]] = iter(())
        self.socket: Any = None

    def install(self, context: Any) -> None:
        context.route("**/v1/sessions/s1", self._session)
        context.route("**/v1/projects/p1", self._project)
        context.route_web_socket(re.compile(r".*/v1/sessions/s1/ws.*"), self._connect)

    def _json(self, route: Any, body: Any) -> None:
        route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    def _session(self, route: Any) -> None:
        self._json(
            route,
            {
                "id": "s1",
                "workflow_id": None,
                "project_id": "p1",
                "read_only": self.read_only,
                "messages": self.messages,
                "workflow": None,
                "pending_confirmation": self.pending,
            },
        )

    def _project(self, route: Any) -> None:
        self._json(route, self.project)

    def _connect(self, ws: Any) -> None:
        self.socket = ws
        ws.on_message(lambda message: self._on_frame(json.loads(message)))

    def send(self, frame: dict[str, Any]) -> None:
        self.socket.send(json.dumps(frame))

    def _on_frame(self, frame: dict[str, Any]) -> None:
        if frame["type"] == "turn":
            self.turns.append(frame)
            self.messages.append(
                {"role": "user", "content": frame["content"], "turn_id": "t1", "created_at": NOW}
            )
            self.send({"type": "turn.started", "turn_id": "t1"})
            self.propose(revision=1)
        elif frame["type"] == "confirm":
            self.answers.append(frame)
            if frame["approved"]:
                self.build()
            elif frame.get("feedback"):
                self.plan["workflows"][1]["name"] = "Referral intake (revised)"
                self.propose(revision=2)
            else:
                self.pending = None
                self.record("rejected")
                self.send({"type": "message", "turn_id": "t1", "text": "Plan rejected."})
                self.send({"type": "turn.completed", "turn_id": "t1", "version": None})

    def review(self, revision: int) -> dict[str, Any]:
        return {
            "plan": copy.deepcopy(self.plan),
            "contracts": CONTRACTS,
            "delta": self.delta,
            "revision": revision,
        }

    def record(self, status: str, **fields: Any) -> None:
        """The project's stored plan, written before the frames about it (as the server does)."""
        plan = self.project["plan"] or {"workflows": {}, "contracts": CONTRACTS}
        plan.update(status=status, plan=copy.deepcopy(self.plan), **fields)
        self.project["plan"] = plan

    def propose(self, revision: int) -> None:
        review = self.review(revision)
        self.record("proposed", revision=revision, delta=self.delta, request_id=f"r{revision}")
        question = "Build these 4 workflows?"
        self.pending = {"turn_id": "t1", "request_id": f"r{revision}", "question": question}
        self.pending["plan"] = review
        self.send(
            {
                "type": "plan.proposed",
                "turn_id": "t1",
                "request_id": f"r{revision}",
                "question": question,
                **review,
            }
        )

    def build(self) -> None:
        self.pending = None
        self.record("building")
        self.queue = self.build_frames()
        self.pump()

    def pump(self) -> None:
        """Send the build's frames; with ``stall`` set, stop after the first workflow frame
        (the test looks at the page mid-build, then pumps the rest)."""
        for frame in self.queue:
            self.send(frame)
            if self.stall and frame["type"] == "workflow":
                self.stall = False
                return

    def build_frames(self) -> Iterator[dict[str, Any]]:
        outcomes = self.project["plan"]["workflows"]
        for number, key in enumerate(self.plan["order"], 1):
            workflow_id = f"w{number}"
            progress = {"type": "plan.progress", "turn_id": "t1", "workflow_key": key}
            yield {**progress, "workflow_id": None, "status": "building"}
            if key in self.fail:
                outcomes[key] = {"status": "failed", "workflow_id": None, "message": NO_ADAPTOR}
                yield {**progress, "workflow_id": None, "status": "failed", "message": NO_ADAPTOR}
                continue
            name = next(w["name"] for w in self.plan["workflows"] if w["key"] == key)
            self.project["workflows"].append(
                {"id": workflow_id, "name": name, "version": 2, "position": number - 1}
            )
            yield {
                "type": "workflow",
                "turn_id": "t1",
                "workflow_id": workflow_id,
                "version": 2,
                "yaml": "name: x\n",
                "changes": [{"kind": "job", "key": "a", "action": "added"}],
            }
            outcomes[key] = {"status": "built", "workflow_id": workflow_id, "message": ""}
            yield {**progress, "workflow_id": workflow_id, "status": "built"}
        self.record("partial" if self.fail else "built")
        yield {"type": "message", "turn_id": "t1", "text": "Built the plan."}
        yield {"type": "turn.completed", "turn_id": "t1", "version": None}


@pytest.fixture
def fake() -> FakeProject:
    return FakeProject()


def open_project(server: LiveServer, open_page: OpenPage, fake: FakeProject) -> Any:
    page = open_page(f"{server.url}/#project=p1&session=s1", setup=fake.install)
    page.wait_for_selector('.connection[data-state="open"]')
    return page


def propose(page: Any) -> Any:
    page.fill("#chat-input", "# Referral system\n\n## 1. Intake\n...")
    page.press("#chat-input", "Enter")
    card = page.locator(".plan-card").last
    expect(card).to_be_visible()
    return card


def test_the_card_shows_the_whole_plan_and_approving_builds_with_progress(
    server: LiveServer, open_page: OpenPage, fake: FakeProject
) -> None:
    page = open_project(server, open_page, fake)
    expect(page.locator("#project-pane")).to_be_visible()
    expect(page.locator("#workflow-pane")).to_be_hidden()
    expect(page.locator("#plan-mode")).to_be_checked()
    expect(page.locator("#plan-status")).to_contain_text("No plan yet")

    card = propose(page)
    assert fake.turns[0]["mode"] == "plan"
    expect(card.locator(".plan-summary")).to_have_text(PLAN["summary"])
    expect(card.locator(".plan-workflow")).to_have_count(4)
    intake = card.locator('.plan-workflow[data-key="intake"]')
    expect(intake.locator(".pw-name")).to_have_text("Referral intake")
    expect(intake.locator('dd[data-field="trigger"]')).to_have_text("webhook")
    expect(intake.locator('dd[data-field="inputs"]')).to_have_text("none")
    decision = card.locator('.plan-workflow[data-key="decision"]')
    expect(decision.locator('dd[data-field="depends_on"]')).to_have_text(
        "coverage-check, document-check"
    )
    expect(decision.locator(".pw-steps li")).to_have_count(2)
    expect(card.locator(".order-list li")).to_have_text(
        ["Referral intake", "Coverage check", "Document verification", "Referral decision"]
    )
    expect(card.locator(".plan-contract").first).to_contain_text(
        "Referral intake → Coverage check: referral"
    )
    expect(card.locator(".plan-contract").first).to_contain_text("/i/referrals-coverage-check")
    expect(card.locator(".plan-delta")).to_have_count(0)  # a first plan has no delta
    page.wait_for_selector('body[data-turn="confirm"]')
    expect(page.locator("#send-button")).to_be_disabled()
    expect(page.locator("#plan-status")).to_contain_text("revision 1 proposed")
    expect(page.locator(".project-workflow")).to_have_count(4)
    screenshot(page, "plan-card-01-proposed")

    card.locator("button.approve").click()
    page.wait_for_selector('body[data-turn="idle"]')
    assert fake.answers == [{"type": "confirm", "request_id": "r1", "approved": True}]
    expect(card).to_have_class(re.compile(r"\bapproved\b"))
    progress = page.locator("li.plan-progress")
    expect(progress).to_have_count(4)
    expect(progress.first).to_have_text("✓Built Referral intake")
    expect(page.locator('.project-workflow[data-status="built"]')).to_have_count(4)
    entry = page.locator('.project-workflow[data-key="intake"]')
    expect(entry).to_have_attribute("data-workflow-id", "w1")
    expect(entry.locator(".wf-version")).to_have_text("v2")
    expect(entry.locator(".wf-live")).to_have_text("Last change: Added step a")
    expect(entry.locator("a.open-workflow")).to_have_attribute("href", "#workflow=w1")
    screenshot(page, "plan-card-02-built")


def test_a_failed_workflow_is_reported_and_the_others_still_show_built(
    server: LiveServer, open_page: OpenPage, fake: FakeProject
) -> None:
    fake.fail = {"document-check"}
    page = open_project(server, open_page, fake)
    propose(page).locator("button.approve").click()
    page.wait_for_selector('body[data-turn="idle"]')
    failed = page.locator('li.plan-progress[data-status="failed"]')
    expect(failed).to_have_text(f"✗Could not build Document verification: {NO_ADAPTOR}")
    expect(page.locator('.project-workflow[data-status="failed"] .wf-message')).to_have_text(
        NO_ADAPTOR
    )
    expect(page.locator("#plan-status")).to_have_text("Partly built: 3 built, 1 failed.")
    expect(page.locator('.project-workflow[data-status="built"]')).to_have_count(3)


def test_adjust_sends_feedback_and_shows_the_revision_and_reject_sends_none(
    server: LiveServer, open_page: OpenPage, fake: FakeProject
) -> None:
    page = open_project(server, open_page, fake)
    propose(page)
    card = page.locator('.plan-card[data-revision="1"]')
    card.locator("button.adjust").click()
    card.locator("button.send-feedback").click()  # empty feedback is not sent
    expect(card.locator(".plan-outcome")).to_contain_text("Say what should change")
    assert fake.answers == []
    card.locator("textarea.plan-feedback").fill("name the intake workflow differently")
    card.locator("button.send-feedback").click()
    revised = page.locator('.plan-card[data-revision="2"]')
    expect(revised.locator('.plan-workflow[data-key="intake"] .pw-name')).to_have_text(
        "Referral intake (revised)"
    )
    expect(card).to_have_class(re.compile(r"\badjusted\b"))
    assert fake.answers[-1] == {
        "type": "confirm",
        "request_id": "r1",
        "approved": False,
        "feedback": "name the intake workflow differently",
    }
    revised.locator("button.reject").click()
    page.wait_for_selector('body[data-turn="idle"]')
    assert fake.answers[-1] == {"type": "confirm", "request_id": "r2", "approved": False}
    expect(revised.locator(".plan-outcome")).to_have_text("Rejected: nothing was built.")
    expect(page.locator("#plan-status")).to_contain_text("rejected")


def test_the_card_comes_back_after_a_reload_with_its_delta_highlighted(
    server: LiveServer, open_page: OpenPage, fake: FakeProject
) -> None:
    fake.delta = {
        "added": ["document-check"],
        "changed": [{"key": "decision", "fields": ["depends_on", "steps"]}],
        "removed": ["old-review"],
        "unchanged": ["intake", "coverage-check"],
    }
    page = open_project(server, open_page, fake)
    propose(page)
    page.reload()
    page.wait_for_selector('.connection[data-state="open"]')
    card = page.locator(".plan-card")
    expect(card).to_have_count(1)
    expect(card).to_have_attribute("data-request-id", "r1")
    expect(card.locator(".delta-line")).to_have_text(
        [
            "Added document-check",
            "Changed decision (depends on, steps)",
            "Removed old-review (its workflow is kept as it is)",
        ]
    )
    expect(card.locator('.plan-workflow[data-delta="added"]')).to_have_count(1)
    decision = card.locator('.plan-workflow[data-key="decision"]')
    expect(decision).to_have_attribute("data-delta", "changed")
    expect(decision.locator('dd.changed[data-field="depends_on"]')).to_have_count(1)
    expect(decision.locator('dd.changed[data-field="trigger"]')).to_have_count(0)
    expect(card.locator('.plan-workflow.removed[data-key="old-review"]')).to_have_count(1)
    page.wait_for_selector('body[data-turn="confirm"]')
    screenshot(page, "plan-card-03-delta-after-reload")
    card.locator("button.approve").click()  # answers the review from before the reload
    page.wait_for_selector('body[data-turn="idle"]')
    assert fake.answers == [{"type": "confirm", "request_id": "r1", "approved": True}]


def test_plan_text_is_shown_as_text_never_as_markup(
    server: LiveServer, open_page: OpenPage, fake: FakeProject
) -> None:
    fake.project["name"] = HOSTILE
    fake.plan["summary"] = HOSTILE
    fake.plan["workflows"][0]["name"] = HOSTILE
    fake.plan["workflows"][0]["steps"] = [HOSTILE]
    page = open_project(server, open_page, fake)
    card = propose(page)
    expect(card.locator(".plan-summary")).to_have_text(HOSTILE)
    expect(card.locator('.plan-workflow[data-key="decision"] .pw-name')).to_have_text(HOSTILE)
    expect(page.locator("#project-name")).to_have_text(HOSTILE)
    assert page.locator("img").count() == 0
    assert page.evaluate("window.__pwned") is None


def test_a_reviewer_sees_the_plan_but_cannot_answer_it(
    server: LiveServer, open_page: OpenPage
) -> None:
    fake = FakeProject(read_only=True)
    review = fake.review(1)
    fake.pending = {"turn_id": "t1", "request_id": "r1", "question": "Build?", "plan": review}
    page = open_project(server, open_page, fake)
    card = page.locator(".plan-card")
    expect(card.locator(".plan-workflow")).to_have_count(4)
    expect(card.locator("button")).to_have_count(0)
    expect(page.locator("#plan-toggle")).to_be_hidden()
    expect(page.locator("#composer-hint")).to_have_text("A plan is waiting for an editor's review.")


def test_a_workflow_frame_mid_build_shows_in_the_entry_being_built(
    server: LiveServer, open_page: OpenPage, fake: FakeProject
) -> None:
    fake.stall = True
    page = open_project(server, open_page, fake)
    propose(page).locator("button.approve").click()
    entry = page.locator('.project-workflow[data-key="intake"]')
    expect(entry).to_have_attribute("data-status", "building")
    expect(entry).to_have_attribute("data-workflow-id", "w1")  # from the workflow frame
    expect(entry.locator(".wf-live")).to_have_text("Last change: Added step a")
    expect(page.locator("#plan-status")).to_have_text("Building: 0 of 4 built.")
    expect(page.locator('li.plan-progress[data-status="building"]')).to_have_text(
        "Building Referral intake…"
    )
    fake.pump()
    page.wait_for_selector('body[data-turn="idle"]')
    expect(page.locator('.project-workflow[data-status="built"]')).to_have_count(4)


def test_a_plan_proposed_while_the_connection_was_down_shows_once_reconnected(
    server: LiveServer, open_page: OpenPage, fake: FakeProject
) -> None:
    page = open_project(server, open_page, fake)
    expect(page.locator(".plan-card")).to_have_count(0)
    # Proposed on another device, say, while this page was not connected.
    fake.pending = {"turn_id": "t9", "request_id": "r9", "question": "Build?"}
    fake.pending["plan"] = fake.review(1)
    fake.record("proposed", revision=1)
    fake.socket.close(code=1012, reason="restart")
    card = page.locator('.plan-card[data-request-id="r9"]')
    expect(card).to_be_visible(timeout=20_000)
    page.wait_for_selector('body[data-turn="confirm"]')
    expect(page.locator("#plan-status")).to_contain_text("waiting for review")


def test_a_build_run_elsewhere_is_followed_until_it_is_built(
    server: LiveServer, open_page: OpenPage, fake: FakeProject
) -> None:
    fake.record("building", revision=1)
    fake.project["plan"]["workflows"] = {"intake": {"status": "building", "workflow_id": None}}
    page = open_project(server, open_page, fake)
    expect(page.locator("#plan-status")).to_have_text("Building: 0 of 4 built.")
    for number, key in enumerate(PLAN["order"], 1):
        fake.project["plan"]["workflows"][key] = {"status": "built", "workflow_id": f"w{number}"}
        fake.project["workflows"].append({"id": f"w{number}", "name": key, "version": 3})
    fake.record("built")
    expect(page.locator("#plan-status")).to_have_text("Built: 4 workflows.")
    expect(page.locator('.project-workflow[data-status="built"]')).to_have_count(4)


def test_a_review_answered_on_another_device_is_no_longer_answerable_here(
    server: LiveServer, open_page: OpenPage, fake: FakeProject
) -> None:
    page = open_project(server, open_page, fake)
    card = propose(page)
    # Another device approves: the stored plan moves on and the session has no pause.
    fake.pending = None
    fake.record("building", request_id=None)
    expect(card).to_have_attribute("data-answer", "elsewhere")
    expect(card.locator("button")).to_have_count(0)
    expect(card.locator(".plan-outcome")).to_contain_text("Answered elsewhere")
    page.wait_for_selector('body[data-turn="idle"]')
    expect(page.locator("#plan-status")).to_contain_text("Building")
