"""Review mode on the web page, end to end: real headless Chromium, the real server and
the offline model (DESIGN §5c).

A review-mode turn ends in a review card (the diff, one checkbox per change with its
impact in red, the draft on the diagram) and commits nothing until it is answered:
accept all, accept some by unticking, reject; a dependent answer keeps the card; a
stale one closes it; the card survives a reload. Screenshots go to test-artifacts/e2e/.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.documents import CODED_REFERRAL_DOC
from tests.e2e.helpers import OpenPage, at_version, screenshot
from tests.e2e.server import EDITOR, LiveServer

# The offline planner makes three tool calls for it: c1 adds the step, c2 points
# Fetch referral's edge at it (Check coverage and Alert staff stop running until c3),
# c3 connects it on to Check coverage. c2 and c3 need c1.
ADD_DEDUPE = "add a step called Dedupe with common after Fetch referral"
FAILURE_RED = "rgb(208, 56, 75)"


def review_session(server: LiveServer, open_page: OpenPage) -> tuple[Any, dict[str, Any]]:
    """A review-mode session (as the web page opens them) on the coded referral doc."""
    created = server.create_workflow(EDITOR, yaml=CODED_REFERRAL_DOC)
    session = server.request(
        "POST",
        "/v1/sessions",
        EDITOR,
        json={"workflow_id": created["id"], "read_only": False, "review": True},
    )
    page = open_page(f"{server.url}/#session={session['id']}")
    page.wait_for_selector('.connection[data-state="open"]')
    return page, created


def propose(page: Any, text: str = ADD_DEDUPE) -> Any:
    """Send a turn and return the review card once the turn waits for it."""
    page.fill("#chat-input", text)
    page.press("#chat-input", "Enter")
    card = page.locator(".review-card:not([data-answer])")
    expect(card).to_be_visible(timeout=30_000)
    page.wait_for_selector('body[data-turn="review"]')
    return card


def head(server: LiveServer, workflow_id: str) -> dict[str, Any]:
    found: dict[str, Any] = server.request("GET", f"/v1/workflows/{workflow_id}", EDITOR)
    return found


def job_keys(page: Any) -> list[str]:
    keys: list[str] = page.locator(".node.job").evaluate_all("ns => ns.map(n => n.dataset.key)")
    return keys


def test_the_picker_opens_review_sessions_and_accept_all_commits_one_version(
    server: LiveServer, open_page: OpenPage
) -> None:
    created = server.create_workflow(EDITOR, yaml=CODED_REFERRAL_DOC)
    watcher_session = server.create_session(created["id"], EDITOR, read_only=True)
    watcher = open_page(f"{server.url}/#session={watcher_session['id']}")
    watcher.wait_for_selector('.connection[data-state="open"]')

    page = open_page(server.url + "/")
    expect(page.locator("#review-option")).to_be_checked()  # on by default
    page.locator(f'tr[data-workflow-id="{created["id"]}"] button.open-edit').click()
    page.wait_for_selector('.connection[data-state="open"]')
    session_id = page.url.rsplit("session=", 1)[1]
    assert server.request("GET", f"/v1/sessions/{session_id}", EDITOR)["review"] is True
    expect(page.locator("#review-mode")).to_be_checked()

    card = propose(page)
    changes = card.locator(".review-change")
    expect(changes).to_have_count(3)
    expect(changes.locator("input.change-check:checked")).to_have_count(3)
    expect(changes.nth(0)).to_contain_text("Added 1 step: Dedupe")
    expect(changes.nth(0).locator(".impact")).to_have_count(0)
    impact = changes.nth(1).locator(".impact")
    expect(impact.first).to_contain_text("'Check coverage' and 1 more step would no longer run")
    assert impact.first.evaluate("e => getComputedStyle(e).color") == FAILURE_RED
    expect(card.locator(".review-diff .d-add")).to_contain_text(["+   dedupe:"])
    expect(card.locator(".review-diff .d-del")).to_contain_text(["-   fetch->check:"])
    expect(card.locator("button.accept")).to_have_text("Accept all")
    expect(page.locator("#send-button")).to_be_disabled()

    # The diagram previews the draft, marked as such; nothing is committed or published.
    expect(page.locator("#draft-bar")).to_contain_text("Draft, not applied")
    expect(page.locator(".diagram-svg.draft")).to_have_count(1)
    expect(page.locator('.node.job.changed[data-key="dedupe"]')).to_have_count(1)
    expect(page.locator("body")).to_have_attribute("data-version", "1")
    assert head(server, created["id"])["version"] == 1
    assert "dedupe" not in job_keys(watcher)
    screenshot(page, "review-01-card")

    card.locator("button.preview").click()  # back to the head, and again to the draft
    expect(page.locator("#draft-bar")).to_be_hidden()
    assert "dedupe" not in job_keys(page)
    card.locator("button.preview").click()
    expect(page.locator("#draft-bar")).to_be_visible()

    card.locator("button.accept").click()
    at_version(page, 2)
    answered = page.locator(".review-card.accepted")
    expect(answered.locator(".review-outcome")).to_have_text("All changes applied as version 2.")
    expect(page.locator("#draft-bar")).to_be_hidden()
    assert "dedupe" in job_keys(page)
    expect(page.locator('.edge[data-key="dedupe->check"]')).to_have_count(1)
    expect(page.locator("#versions li.version")).to_have_count(2)  # one version for all three
    assert head(server, created["id"])["version"] == 2
    at_version(watcher, 2)  # watchers see it once it is accepted
    assert "dedupe" in job_keys(watcher)
    expect(page.locator("#send-button")).to_be_enabled()
    screenshot(page, "review-02-accepted")


def test_accepting_some_changes_applies_only_those(server: LiveServer, open_page: OpenPage) -> None:
    page, created = review_session(server, open_page)
    card = propose(page)
    card.locator('input[data-change-id="c2"]').uncheck()
    card.locator('input[data-change-id="c3"]').uncheck()
    expect(card.locator('.review-change[data-change-id="c2"]')).to_have_class(
        re.compile(r"\bleft-out\b")
    )
    expect(card.locator("button.accept")).to_have_text("Accept 1 of 3")
    screenshot(page, "review-03-some-unticked")

    card.locator("button.accept").click()
    at_version(page, 2)
    expect(page.locator(".review-card.accepted .review-outcome")).to_have_text(
        "1 of 3 changes applied as version 2."
    )
    document = head(server, created["id"])
    assert document["version"] == 2
    assert "dedupe:" in document["yaml"]  # c1
    assert "fetch->check:" in document["yaml"]  # c2 left out: the edge stays
    assert "dedupe->check" not in document["yaml"]  # c3 left out
    assert "dedupe" in job_keys(page)
    expect(page.locator('.edge[data-key="fetch->check"]')).to_have_count(1)


def test_a_dependent_answer_keeps_the_card_and_reject_changes_nothing(
    server: LiveServer, open_page: OpenPage
) -> None:
    page, created = review_session(server, open_page)
    card = propose(page)
    card.locator('input[data-change-id="c1"]').uncheck()
    card.locator("button.accept").click()  # c2 and c3 need the step c1 adds

    outcome = card.locator(".review-outcome")
    expect(outcome).to_contain_text("A change you accepted needs one you left out")
    expect(outcome).to_contain_text("c1 (Added 1 step: Dedupe")  # the server names it
    # The accepted change that cannot apply is marked; the card stays answerable.
    expect(card.locator('.review-change[data-change-id="c2"]')).to_have_class(
        re.compile(r"\bneeded\b")
    )
    expect(card.locator('.review-change[data-change-id="c2"] .change-note')).to_have_text(
        "Cannot apply without a change that was left out."
    )
    expect(card.locator("button.reject")).to_be_enabled()  # still open: answer again
    page.wait_for_selector('body[data-turn="review"]')
    assert head(server, created["id"])["version"] == 1
    screenshot(page, "review-04-dependent")

    card.locator("button.reject").click()
    page.wait_for_selector('body[data-turn="idle"]')
    rejected = page.locator(".review-card.rejected")
    expect(rejected.locator(".review-outcome")).to_have_text("Rejected: the workflow is unchanged.")
    expect(page.locator("#draft-bar")).to_be_hidden()
    assert head(server, created["id"])["version"] == 1
    assert "dedupe" not in job_keys(page)
    expect(page.locator("#versions li.version")).to_have_count(1)
    expect(page.locator("body")).to_have_attribute("data-version", "1")


def test_the_card_survives_a_reload_and_is_answered_after_it(
    server: LiveServer, open_page: OpenPage
) -> None:
    page, created = review_session(server, open_page)
    card = propose(page)
    request_id = card.get_attribute("data-request-id")

    page.reload()
    page.wait_for_selector('.connection[data-state="open"]')
    again = page.locator(f'.review-card[data-request-id="{request_id}"]')
    expect(again).to_be_visible()
    expect(again.locator(".review-change")).to_have_count(3)
    expect(again.locator(".review-change .impact").first).to_contain_text("would no longer run")
    expect(page.locator("#draft-bar")).to_be_visible()
    page.wait_for_selector('body[data-turn="review"]')
    expect(page.locator("#send-button")).to_be_disabled()
    screenshot(page, "review-05-after-reload")

    again.locator("button.accept").click()
    at_version(page, 2)
    assert "dedupe->check:" in head(server, created["id"])["yaml"]


def test_a_stale_proposal_is_closed_and_commits_nothing(
    server: LiveServer, open_page: OpenPage
) -> None:
    page, created = review_session(server, open_page)
    card = propose(page)
    # Another editor removes the edge the proposal re-points, and saves a version.
    current = head(server, created["id"])
    moved = re.sub(r"  fetch->check:\n(    .*\n)+", "", current["yaml"])
    assert moved != current["yaml"]
    saved = httpx.put(
        f"{server.url}/v1/workflows/{created['id']}",
        json={"yaml": moved, "expected_version": 1},
        headers={"Authorization": f"Bearer {EDITOR}"},
    )
    assert saved.status_code == 200, saved.text
    at_version_2 = page.locator('body[data-version="2"]')
    expect(at_version_2).to_have_count(1)  # the watch socket brings the other edit

    card.locator("button.accept").click()
    closed = page.locator('.review-card[data-error="stale_proposal"]')
    expect(closed.locator(".review-outcome")).to_contain_text("The workflow changed since")
    expect(closed.locator(".review-outcome")).to_contain_text("Nothing was committed")
    expect(closed.locator("button.accept")).to_have_count(0)
    page.wait_for_selector('body[data-turn="idle"]')
    assert head(server, created["id"])["version"] == 2
    assert "dedupe" not in job_keys(page)
    expect(page.locator("#send-button")).to_be_enabled()
    screenshot(page, "review-06-stale")


def test_turning_review_off_for_a_turn_applies_it_as_it_goes(
    server: LiveServer, open_page: OpenPage
) -> None:
    page, created = review_session(server, open_page)
    page.uncheck("#review-mode")
    page.fill("#chat-input", "rename Fetch referral to Get referral")
    page.press("#chat-input", "Enter")
    at_version(page, 2)
    expect(page.locator(".review-card")).to_have_count(0)
    assert "name: Get referral" in head(server, created["id"])["yaml"]
