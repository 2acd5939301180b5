"""Plan mode on the web page, end to end: real headless Chromium, the real server and
the offline model planning from the four-process spec (DESIGN §5a).

A spec pasted into a project session becomes a plan card; the card survives a
reload mid-review; approving builds the four workflows with per-workflow progress
in the chat and the project pane; feedback gives a revised card; rejecting builds
nothing. Screenshots go to test-artifacts/e2e/.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from app.plan_turns import plan_lock_key
from tests.e2e.helpers import SPEC, OpenPage, screenshot
from tests.e2e.server import EDITOR, LiveServer

NAMES = ["Intake", "Coverage check", "Document verification", "Status report"]
BUILT = 120_000  # ms: four ordinary planner runs on a 2-core machine


def new_project(server: LiveServer, name: str = "Referral intake system") -> dict[str, Any]:
    project: dict[str, Any] = server.request("POST", "/v1/projects", EDITOR, json={"name": name})
    return project


def open_project(server: LiveServer, open_page: OpenPage, project_id: str) -> Any:
    """The project view; it opens a project session and puts it in the address."""
    page = open_page(f"{server.url}/#project={project_id}")
    page.wait_for_url(re.compile(rf"#project={project_id}&session=[\w-]+$"))
    page.wait_for_selector('.connection[data-state="open"]')
    return page


def propose(page: Any, revision: int = 1) -> Any:
    """Paste the spec, send it in plan mode, and return the plan card once it shows."""
    expect(page.locator("#plan-mode")).to_be_checked()
    page.fill("#chat-input", SPEC)
    page.press("#chat-input", "Enter")
    card = page.locator(f'.plan-card[data-revision="{revision}"]')
    expect(card).to_be_visible(timeout=30_000)
    page.wait_for_selector('body[data-turn="confirm"]')
    return card


def test_a_spec_becomes_a_plan_that_survives_a_reload_and_builds_four_workflows(
    server: LiveServer, open_page: OpenPage
) -> None:
    project = new_project(server)
    page = open_project(server, open_page, project["id"])
    expect(page.locator("#mode-badge")).to_have_text("Planning")
    expect(page.locator("#project-name")).to_have_text("Referral intake system")
    expect(page.locator("#plan-status")).to_contain_text("No plan yet")

    card = propose(page)
    workflows = card.locator(".plan-workflow")
    expect(workflows).to_have_count(4)
    expect(workflows.locator(".pw-name")).to_have_text(
        [re.compile(re.escape(name), re.I) for name in NAMES]
    )
    coverage = workflows.filter(has_text="Coverage check")
    expect(coverage.locator('dd[data-field="depends_on"]')).to_contain_text("intake")
    expect(coverage.locator('dd[data-field="trigger"]')).to_have_text("webhook")
    report = workflows.filter(has_text="Status report")
    expect(report.locator('dd[data-field="trigger"]')).to_contain_text("cron")
    expect(card.locator(".order-list li")).to_have_count(4)
    expect(card.locator(".order-list li").first).to_contain_text("Intake")
    expect(card.locator(".plan-contract")).to_have_count(2)  # intake hands off to two
    expect(page.locator("#plan-status")).to_contain_text("waiting for review")
    expect(page.locator("#send-button")).to_be_disabled()
    request_id = card.get_attribute("data-request-id")
    screenshot(page, "plan-01-proposed")

    # Mid-review reload: the same card comes back, answerable.
    page.reload()
    page.wait_for_selector('.connection[data-state="open"]')
    card = page.locator(".plan-card")
    expect(card).to_have_count(1)
    expect(card).to_have_attribute("data-request-id", request_id or "")
    expect(card.locator(".plan-workflow")).to_have_count(4)
    page.wait_for_selector('body[data-turn="confirm"]')
    expect(page.locator("#plan-status")).to_contain_text("waiting for review")
    screenshot(page, "plan-02-after-reload")

    card.locator("button.approve").click()
    expect(card).to_have_class(re.compile(r"\bapproved\b"))
    page.wait_for_selector('body[data-turn="idle"]', timeout=BUILT)
    built = page.locator('li.plan-progress[data-status="built"]')
    expect(built).to_have_count(4)
    expect(page.locator('li.plan-progress[data-status="failed"]')).to_have_count(0)
    entries = page.locator('.project-workflow[data-status="built"]')
    expect(entries).to_have_count(4)
    expect(page.locator("#plan-status")).to_have_text(re.compile(r"^Built: 4 workflows"))
    listed = server.request("GET", f"/v1/projects/{project['id']}", EDITOR)
    assert len(listed["workflows"]) == 4
    assert listed["plan"]["status"] == "built"
    ids = {w["id"] for w in listed["workflows"]}
    shown = entries.evaluate_all("items => items.map(i => i.dataset.workflowId)")
    assert set(shown) == ids
    screenshot(page, "plan-03-built")

    # The whole project leaves as one Lightning project.yaml.
    with page.expect_download() as download:
        page.click("#project-export")
    exported = Path(download.value.path()).read_text(encoding="utf-8")
    assert download.value.suggested_filename == "Referral-intake-system.yaml"
    assert exported.startswith("name: Referral intake system\n"), exported[:200]
    for name in NAMES:
        assert f"name: {name}\n" in exported

    # Each entry opens its workflow; the workflow page links back to the project.
    entries.filter(has_text="Coverage check").locator("a.open-workflow").click()
    page.wait_for_url(re.compile(r"#session=[\w-]+$"))
    page.wait_for_selector('.connection[data-state="open"]')
    expect(page.locator(".node.job")).not_to_have_count(0)
    expect(page.locator("#project-link")).to_have_text("Referral intake system ›")
    page.click("#project-link")
    page.wait_for_url(re.compile(rf"#project={project['id']}&session=[\w-]+$"))
    expect(page.locator('.project-workflow[data-status="built"]')).to_have_count(4)


def test_feedback_gives_a_revised_card(server: LiveServer, open_page: OpenPage) -> None:
    project = new_project(server)
    page = open_project(server, open_page, project["id"])
    card = propose(page)
    card.locator("button.adjust").click()
    card.locator("textarea.plan-feedback").fill("rename Coverage check to Eligibility check")
    card.locator("button.send-feedback").click()
    expect(card).to_have_class(re.compile(r"\badjusted\b"))

    revised = page.locator('.plan-card[data-revision="2"]')
    expect(revised).to_be_visible(timeout=30_000)
    expect(revised.locator(".plan-workflow .pw-name")).to_contain_text(["Eligibility check"])
    expect(revised.locator(".plan-workflow", has_text="Coverage check")).to_have_count(0)
    page.wait_for_selector('body[data-turn="confirm"]')
    expect(page.locator("#plan-status")).to_contain_text("revision 2")
    screenshot(page, "plan-04-revised")

    # The revision is what a reload shows.
    page.reload()
    page.wait_for_selector('.connection[data-state="open"]')
    expect(page.locator('.plan-card[data-revision="2"]')).to_have_count(1)
    nothing = server.request("GET", f"/v1/projects/{project['id']}", EDITOR)
    assert nothing["workflows"] == []


def test_reject_builds_nothing(server: LiveServer, open_page: OpenPage) -> None:
    project = new_project(server)
    page = open_project(server, open_page, project["id"])
    card = propose(page)
    card.locator("button.reject").click()
    expect(card).to_have_class(re.compile(r"\brejected\b"))
    page.wait_for_selector('body[data-turn="idle"]')
    expect(page.locator("#plan-status")).to_contain_text("rejected")
    expect(page.locator("li.plan-progress")).to_have_count(0)
    expect(page.locator(".project-workflow[data-workflow-id]")).to_have_count(0)
    stored = server.request("GET", f"/v1/projects/{project['id']}", EDITOR)
    assert stored["workflows"] == []
    assert stored["plan"]["status"] == "rejected"
    # Nothing waits for review after a reload either.
    page.reload()
    page.wait_for_selector('.connection[data-state="open"]')
    expect(page.locator(".plan-card")).to_have_count(0)
    expect(page.locator("#send-button")).to_be_enabled()
    screenshot(page, "plan-05-rejected")


def changed_spec() -> str:
    """The spec with the status report dropped, a step more in document verification and
    a new provider validation process."""
    head, _, _ = SPEC.partition("## Status report")
    head = head.replace(
        "- Record the verification result\n",
        "- Record the verification result\n- Email the coordinator over gmail\n",
    )
    return (
        head.rstrip() + "\n\n## Provider validation\nChecks the referring provider is registered.\n"
        "Uses Intake's result.\n- Look up the provider over http\n- Record the result\n"
    )


def test_a_changed_spec_on_a_built_project_proposes_only_the_changes(
    server: LiveServer, open_page: OpenPage
) -> None:
    project = new_project(server)
    page = open_project(server, open_page, project["id"])
    propose(page).locator("button.approve").click()
    page.wait_for_selector('body[data-turn="idle"]', timeout=BUILT)
    expect(page.locator('.project-workflow[data-status="built"]')).to_have_count(4)

    page.fill("#chat-input", changed_spec())
    page.press("#chat-input", "Enter")
    card = page.locator('.plan-card[data-revision="2"]')
    expect(card).to_be_visible(timeout=30_000)
    lines = card.locator(".delta-line")
    expect(lines.filter(has_text="Added provider-validation")).to_have_count(1)
    expect(lines.filter(has_text="Changed document-verification")).to_have_count(1)
    expect(lines.filter(has_text="Removed status-report")).to_have_count(1)
    expect(card.locator('.plan-workflow[data-key="provider-validation"]')).to_have_attribute(
        "data-delta", "added"
    )
    changed = card.locator('.plan-workflow[data-key="document-verification"]')
    expect(changed).to_have_attribute("data-delta", "changed")
    expect(changed.locator('dd.changed[data-field="steps"]')).to_have_count(1)
    expect(card.locator('.plan-workflow.removed[data-key="status-report"]')).to_have_count(1)
    expect(card.locator('.plan-workflow[data-key="intake"]')).to_have_attribute(
        "data-delta", "unchanged"
    )
    screenshot(page, "plan-06-delta")


def test_projects_are_listed_and_created_on_the_picker(
    server: LiveServer, open_page: OpenPage
) -> None:
    existing = new_project(server, "Listed project")
    page = open_page(server.url + "/")
    row = page.locator(f'tr[data-project-id="{existing["id"]}"]')
    expect(row.locator(".project-name")).to_have_text("Listed project")
    page.fill("#new-project-name", "Made on the page")
    page.click("#new-project-button")
    page.wait_for_url(re.compile(r"#project=[\w-]+&session=[\w-]+$"))
    page.wait_for_selector('.connection[data-state="open"]')
    expect(page.locator("#project-name")).to_have_text("Made on the page")
    expect(page.locator("#workflow-pane")).to_be_hidden()
    page.click("#nav-workflows")
    expect(page.locator("#project-rows tr", has_text="Made on the page")).to_have_count(1)


def test_busy_names_the_project_when_another_plan_turn_holds_it(
    server: LiveServer, open_page: OpenPage
) -> None:
    project = new_project(server)
    page = open_project(server, open_page, project["id"])
    handle = server.call(server.services.lock.acquire(plan_lock_key(project["id"]), ttl_s=30))
    assert handle is not None
    try:
        page.fill("#chat-input", SPEC)
        page.press("#chat-input", "Enter")
        busy = page.locator('.msg.error[data-code="busy"]')
        expect(busy).to_contain_text("Another turn is running on this project")
        page.wait_for_selector('body[data-turn="idle"]')
        expect(page.locator(".plan-card")).to_have_count(0)
    finally:
        server.call(handle.release())
    propose(page)  # free again: the same spec proposes


def test_a_second_page_on_the_session_follows_a_review_answered_on_the_first(
    server: LiveServer, open_page: OpenPage
) -> None:
    project = new_project(server)
    first = open_project(server, open_page, project["id"])
    propose(first)
    second = open_page(first.url)  # the same session on another device
    second.wait_for_selector('.connection[data-state="open"]')
    expect(second.locator(".plan-card button.approve")).to_have_count(1)

    first.locator(".plan-card button.approve").click()
    first.wait_for_selector('body[data-turn="idle"]', timeout=BUILT)
    # The second page gets no frames of the first's turn: it follows the stored plan.
    expect(second.locator("#plan-status")).to_have_text(
        re.compile(r"^Built: 4 workflows"), timeout=30_000
    )
    expect(second.locator(".plan-card button.approve")).to_have_count(0)
    expect(second.locator('.project-workflow[data-status="built"]')).to_have_count(4)
    expect(second.locator("#send-button")).to_be_enabled()
    screenshot(second, "plan-07-second-page-followed")


def test_plan_on_in_a_workflow_session_plans_the_workflows_project(
    server: LiveServer, open_page: OpenPage
) -> None:
    created = server.create_workflow(EDITOR, name="Existing intake")
    session = server.create_session(created["id"], EDITOR)
    page = open_page(f"{server.url}/#session={session['id']}")
    page.wait_for_selector('.connection[data-state="open"]')
    expect(page.locator("#plan-mode")).not_to_be_checked()  # edits by default here
    page.check("#plan-mode")
    page.fill("#chat-input", SPEC)
    page.press("#chat-input", "Enter")
    card = page.locator(".plan-card")
    expect(card.locator(".plan-workflow")).to_have_count(4, timeout=30_000)
    card.locator("button.reject").click()
    page.wait_for_selector('body[data-turn="idle"]')
    stored = server.request("GET", f"/v1/projects/{created['project_id']}", EDITOR)
    assert stored["plan"]["status"] == "rejected"
    assert [w["id"] for w in stored["workflows"]] == [created["id"]]
