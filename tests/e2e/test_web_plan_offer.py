"""The plan-mode offer on the web page (issue 23's routing), in real headless Chromium
against the real server (offline model): a spec with several processes pasted into a
workflow's chat changes nothing and its reply carries a "Plan it" button; pressing it
sends the same message as a plan, and the plan card appears."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.app.service.helpers import NAMES, SPEC
from tests.e2e.helpers import OpenPage, at_version, screenshot, send
from tests.e2e.server import LiveServer


def test_a_multi_process_spec_offers_plan_mode_and_the_button_plans_it(
    server: LiveServer, open_page: OpenPage
) -> None:
    page: Any = open_page(server.url + "/")
    page.uncheck("#review-option")
    page.fill("#new-name", "Referral intake")
    page.click("#new-button")
    page.wait_for_selector('.connection[data-state="open"]')

    send(page, SPEC)
    at_version(page, 1)  # nothing was built
    reply = page.locator(".msg.assistant").last
    expect(reply).to_contain_text("4 separate processes")
    offer = reply.locator("button.plan-offer")
    expect(offer).to_have_text("Plan it")
    screenshot(page, "plan-offer-01-offered")

    offer.click()
    expect(offer).to_be_disabled()
    card = page.locator(".plan-card")
    expect(card).to_be_visible()
    expect(card.locator(".plan-workflow")).to_have_count(len(NAMES))
    screenshot(page, "plan-offer-02-plan-card")
