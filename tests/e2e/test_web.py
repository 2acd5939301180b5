"""The web page in real headless Chromium against the real server (offline model).

Each state the page reaches is saved as a screenshot in test-artifacts/e2e/.
"""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from app.store import Store, create_engine
from tests.e2e.helpers import CODED_DOC, CREATE, OpenPage, at_version, screenshot, send
from tests.e2e.server import EDITOR, REVIEWER, TOKENS, LiveServer

# Branches, a condition, a disabled edge, an edge that skips rows, a loose step, cron.
BRANCHING_DOC = """\
name: Prior auth with a long descriptive name for testing
jobs:
  fetch:
    name: Fetch referral from the intake system of record
    adaptor: '@openfn/language-http@6.4.0'
    body: |
      get('/referrals');
  check:
    name: Check coverage
    adaptor: '@openfn/language-fhir@latest'
    body: // Add operations here
  prior:
    name: Prior auth
    adaptor: '@openfn/language-http@latest'
    body: // Add operations here
  notify:
    name: Notify patient
    adaptor: '@openfn/language-twilio@latest'
    body: // Add operations here
  alert:
    name: Alert staff
    adaptor: '@openfn/language-gmail@latest'
    body: // Add operations here
  archive:
    name: Archive
    adaptor: '@openfn/language-common@latest'
    body: // Add operations here
  orphan:
    name: Orphan step
    adaptor: '@openfn/language-common@latest'
    body: // Add operations here
triggers:
  cron:
    type: cron
    cron_expression: '0 6 * * *'
    enabled: true
edges:
  cron->fetch:
    source_trigger: cron
    target_job: fetch
    condition_type: always
    enabled: true
  fetch->check:
    source_job: fetch
    target_job: check
    condition_type: on_job_success
    enabled: true
  check->prior:
    source_job: check
    target_job: prior
    condition_type: js_expression
    condition_expression: state.plan === 'BlueCross HMO'
    condition_label: BlueCross HMO
    enabled: true
  check->notify:
    source_job: check
    target_job: notify
    condition_type: on_job_success
    enabled: false
  check->alert:
    source_job: check
    target_job: alert
    condition_type: on_job_failure
    enabled: true
  prior->archive:
    source_job: prior
    target_job: archive
    condition_type: on_job_success
    enabled: true
  fetch->archive:
    source_job: fetch
    target_job: archive
    condition_type: on_job_failure
    enabled: true
"""


def open_session(
    server: LiveServer, open_page: OpenPage, token: str = EDITOR, **workflow: Any
) -> tuple[Any, dict[str, Any]]:
    created = server.create_workflow(EDITOR, **workflow)
    session = server.create_session(created["id"], token)
    page = open_page(f"{server.url}/#session={session['id']}", token=token)
    page.wait_for_selector('.connection[data-state="open"]')
    return page, created


def job_keys(page: Any) -> list[str]:
    keys: list[str] = page.locator(".node.job").evaluate_all(
        "nodes => nodes.map(n => n.dataset.key)"
    )
    return keys


# Sampled along every drawn edge: the steps it passes through (other than its own ends),
# and pairs of steps whose boxes overlap.
CROSSINGS = """() => {
  const boxes = [...document.querySelectorAll('.diagram-svg .node')].map((node) => {
    const r = node.querySelector('.node-box').getBBox();
    const m = node.transform.baseVal.consolidate().matrix;
    return { key: node.dataset.key, x: m.e + r.x, y: m.f + r.y, w: r.width, h: r.height };
  });
  const inside = (p, b) =>
    p.x > b.x + 2 && p.x < b.x + b.w - 2 && p.y > b.y + 2 && p.y < b.y + b.h - 2;
  const through = [];
  for (const edge of document.querySelectorAll('.diagram-svg .edge')) {
    const [source, target] = edge.dataset.key.split('->');
    const path = edge.querySelector('path');
    const length = path.getTotalLength();
    for (let at = 0; at <= length; at += 4) {
      const p = path.getPointAtLength(at);
      const hit = boxes.find((b) => b.key !== source && b.key !== target && inside(p, b));
      if (hit) { through.push(`${edge.dataset.key} through ${hit.key}`); break; }
    }
  }
  const overlaps = [];
  boxes.forEach((a, i) => boxes.slice(i + 1).forEach((b) => {
    if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h) {
      overlaps.push(`${a.key}/${b.key}`);
    }
  }));
  return { edges: document.querySelectorAll('.diagram-svg .edge').length, steps: boxes.length,
           through, overlaps };
}"""


# --- serving --------------------------------------------------------------------------


def test_the_page_and_its_assets_are_served_without_any_cdn(server: LiveServer) -> None:
    index = httpx.get(server.url + "/")
    assert index.status_code == 200
    assert "script-src 'self'" in index.headers["content-security-policy"]
    assert '<script type="module" src="/static/app.js">' in index.text
    # The npm libraries the page imports come from this server, out of the folder
    # `npm ci` installed them into; only the pinned packages' files are served.
    for library in [
        "js-yaml/dist/js-yaml.mjs",
        "diff/libesm/index.js",
        "@dagrejs/dagre/dist/dagre.esm.js",
    ]:
        module = httpx.get(f"{server.url}/static/vendor/{library}")
        assert module.status_code == 200, library
        assert module.headers["content-type"].startswith("text/javascript")
    assert httpx.get(server.url + "/static/vendor/js-yaml/LICENSE").status_code == 200
    assert httpx.get(server.url + "/static/vendor/argparse/argparse.js").status_code == 404
    assert httpx.get(server.url + "/static/vendor/.package-lock.json").status_code == 404
    assert httpx.get(server.url + "/static/vendor/js-yaml/../../package.json").status_code == 404
    assert httpx.get(server.url + "/static/__init__.py").status_code == 404
    assert not (Path(__file__).resolve().parents[2] / "app" / "web" / "vendor").exists()
    web = Path(__file__).resolve().parents[2] / "app" / "web"
    for path in [*web.glob("*.html"), *web.glob("*.js"), *web.glob("js/*.js"), *web.glob("*.css")]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"(src|href|from|import)\s*=?\s*[\"']https?://", text), path


# --- chatting a workflow into shape ---------------------------------------------------------


def test_create_a_workflow_by_chatting_and_watch_the_diagram(
    server: LiveServer, open_page: OpenPage
) -> None:
    page = open_page(server.url + "/")
    page.uncheck("#review-option")  # changes apply as they are made (review: test_web_review)
    page.fill("#new-name", "Referral intake")
    page.click("#new-button")
    page.wait_for_selector('.connection[data-state="open"]')
    assert re.search(r"#session=[\w-]+$", page.url)
    expect(page.locator("#mode-badge")).to_have_text("Editing")
    expect(page.locator(".diagram-empty")).to_be_visible()
    screenshot(page, "01-new-workflow")

    send(page, CREATE)
    at_version(page, 2)
    assert job_keys(page) == ["get-referrals", "check-coverage", "email-coordinator"]
    expect(page.locator(".node.job.changed")).to_have_count(3)
    expect(page.locator(".node.trigger")).to_have_count(1)
    expect(page.locator(".edge-label.success")).to_have_count(2)
    expect(page.locator(".status.settled").first).to_contain_text("Created workflow")
    expect(page.locator(".msg.assistant").last).to_contain_text('"Referral intake" has 3 step')
    screenshot(page, "02-created-by-chat")

    send(page, "add a step called Dedupe with common after Get referrals")
    at_version(page, 5)
    assert "dedupe" in job_keys(page)
    # The turn's changes stay highlighted together; untouched steps are not.
    expect(page.locator('.node.job.changed[data-key="dedupe"]')).to_have_count(1)
    expect(page.locator('.edge.changed[data-key="get-referrals->dedupe"]')).to_have_count(1)
    expect(page.locator('.edge.changed[data-key="dedupe->check-coverage"]')).to_have_count(1)
    expect(page.locator('.node.job.changed[data-key="email-coordinator"]')).to_have_count(0)
    expect(page.locator(".status.settled")).to_contain_text(["Added 1 step: Dedupe"])
    expect(page.locator(".status.spinning")).to_have_count(0)
    screenshot(page, "03-step-added")

    send(page, "rename Dedupe to Remove duplicates")
    at_version(page, 6)
    expect(page.locator('.node.job[data-key="dedupe"] .node-title')).to_have_text(
        "Remove duplicates"
    )
    expect(page.locator("#change-summary")).to_contain_text("Updated step dedupe")

    page.click('.tab[data-tab="yaml"]')
    expect(page.locator("#yaml-view")).to_contain_text("name: Remove duplicates")
    expect(page.locator("#yaml-view .y-key").first).to_have_text("name")
    screenshot(page, "04-yaml-tab")

    page.click('.tab[data-tab="diagram"]')
    send(page, "what does this workflow do")
    expect(page.locator(".msg.assistant").last).to_contain_text("4 step")
    at_version(page, 6)  # a question changes nothing

    history = page.locator("#versions li.version")
    expect(history).to_have_count(6)
    expect(history.first).to_contain_text("update_jobs")


def test_import_select_a_step_and_approve_a_confirmation(
    server: LiveServer, open_page: OpenPage
) -> None:
    page = open_page(server.url + "/")
    page.uncheck("#review-option")  # without review mode a removal asks first
    page.fill("#import-yaml", CODED_DOC)
    page.click("#import-button")
    page.wait_for_selector('.connection[data-state="open"]')
    at_version(page, 1)
    failure = page.locator('.edge.failure[data-key="check->alert"]')
    expect(failure).to_have_count(1)
    expect(page.locator(".edge-label.failure")).to_have_text("on failure")
    dash = failure.locator("path").evaluate("p => getComputedStyle(p).strokeDasharray")
    assert dash not in ("", "none"), "failure edges are drawn dashed"
    expect(page.locator('.node.job.has-code[data-key="check"]')).to_have_count(1)
    screenshot(page, "05-imported-with-failure-edge")

    page.click('.node.job[data-key="check"]')
    expect(page.locator('.tab[data-tab="code"]')).to_have_attribute("aria-selected", "true")
    expect(page.locator("#code-view")).to_contain_text("get('Coverage'")
    expect(page.locator("#code-view .j-comment")).to_contain_text("Look up the patient")
    expect(page.locator("#context-chip")).to_contain_text("Check coverage")
    screenshot(page, "06-step-code")
    page.click('.tab[data-tab="diagram"]')

    page.fill("#chat-input", "remove Check coverage")
    page.press("#chat-input", "Enter")
    card = page.locator(".confirm-card")
    expect(card).to_contain_text("remove 'Check coverage', which holds code")
    page.wait_for_selector('body[data-turn="confirm"]')
    expect(page.locator("#send-button")).to_be_disabled()
    at_version_1 = page.locator('body[data-version="1"]')
    expect(at_version_1).to_have_count(1)  # nothing removed before the answer
    screenshot(page, "07-confirmation-card")

    card.locator("button.approve").click()
    expect(card).to_have_class(re.compile(r"\bapproved\b"))
    at_version(page, 3)
    assert "check" not in job_keys(page)
    expect(page.locator('.edge.changed[data-key="fetch->alert"]')).to_have_count(1)
    expect(page.locator("#change-summary")).to_contain_text("Removed step check")
    expect(page.locator(".msg.assistant").last).to_contain_text("Removed Check coverage")
    screenshot(page, "08-confirmation-approved")


def test_history_shows_a_diff_and_reverts(server: LiveServer, open_page: OpenPage) -> None:
    page, _ = open_session(server, open_page, yaml=CODED_DOC)
    send(page, "rename Fetch referral to Get referral")
    at_version(page, 2)
    expect(page.locator('.node.job[data-key="fetch"] .node-title')).to_have_text("Get referral")

    versions = page.locator("#versions li.version")
    expect(versions).to_have_count(2)
    expect(versions.first).to_contain_text("update_jobs")
    expect(versions.first).to_contain_text("current")
    expect(page.locator("#diff-view .d-del")).to_contain_text("name: Fetch referral")
    expect(page.locator("#diff-view .d-add")).to_contain_text("name: Get referral")
    expect(page.locator("#revert-button")).to_be_hidden()  # the current version

    versions.nth(1).click()
    expect(page.locator("#diff-title")).to_contain_text("v1")
    expect(page.locator("#revert-button")).to_have_text("Revert to v1")
    screenshot(page, "09-history-diff")

    page.click("#revert-button")
    at_version(page, 3)
    expect(page.locator('.node.job[data-key="fetch"] .node-title')).to_have_text("Fetch referral")
    expect(page.locator('.node.job.changed[data-key="fetch"]')).to_have_count(1)
    expect(versions).to_have_count(3)
    expect(versions.first).to_contain_text("revert")
    expect(versions.first).to_contain_text("Reverted to version 1")
    screenshot(page, "10-reverted")


def test_the_same_session_on_a_second_page_comes_back_and_follows_along(
    server: LiveServer, open_page: OpenPage
) -> None:
    first, _ = open_session(server, open_page)
    send(first, CREATE)
    at_version(first, 2)

    second = open_page(first.url)
    second.wait_for_selector('.connection[data-state="open"]')
    at_version(second, 2)
    expect(second.locator(".msg.user .msg-body")).to_have_text([CREATE])
    expect(second.locator(".msg.assistant")).to_have_count(1)
    assert job_keys(second) == job_keys(first)

    # A change made on the first page shows up live on the second.
    send(first, "rename Check coverage to Verify coverage")
    at_version(second, 3)
    expect(second.locator('.node.job.changed[data-key="check-coverage"]')).to_have_count(1)
    expect(second.locator(".msg.assistant")).to_have_count(2)  # the conversation follows
    screenshot(second, "11-second-page-follows")

    first.reload()
    first.wait_for_selector('.connection[data-state="open"]')
    at_version(first, 3)
    expect(first.locator(".msg.user")).to_have_count(2)
    expect(first.locator(".msg.assistant").last).to_contain_text("Verify coverage")
    screenshot(first, "12-reloaded")


def test_a_reviewer_page_cannot_edit_but_still_gets_answers(
    server: LiveServer, open_page: OpenPage
) -> None:
    created = server.create_workflow(EDITOR, yaml=CODED_DOC)
    server.request(
        "PUT",
        f"/v1/workflows/{created['id']}",
        EDITOR,
        json={
            "yaml": created["yaml"].replace("name: Referral intake", "name: Referral intake v2", 1),
            "expected_version": created["version"],
        },
    )  # a second version, so there is something one could revert to
    page = open_page(server.url + "/", token=REVIEWER)
    row = page.locator(f'tr[data-workflow-id="{created["id"]}"]')
    row.locator("button.open-edit").click()  # asks for editing; gets read-only
    page.wait_for_selector('.connection[data-state="open"]')
    expect(page.locator("#mode-badge")).to_have_text("Read-only")
    expect(page.locator("#readonly-notice")).to_be_visible()
    expect(page.locator("#readonly-notice")).to_contain_text("cannot be changed")

    page.locator("#versions li.version").nth(1).click()
    expect(page.locator("#diff-title")).to_contain_text("v1")
    expect(page.locator("#revert-button")).to_be_hidden()

    send(page, "remove Check coverage")
    expect(page.locator(".msg.assistant").last).to_contain_text("read-only")
    expect(page.locator(".confirm-card")).to_have_count(0)
    at_version(page, 2)
    assert "check" in job_keys(page)

    send(page, "what happens when the coverage check fails?")
    expect(page.locator(".msg.assistant").last).to_contain_text("Alert staff")
    screenshot(page, "13-reviewer-read-only")

    # The server refuses edits from a reviewer whatever the page does.
    refused = httpx.post(
        f"{server.url}/v1/workflows/{created['id']}/revert",
        json={"version": 1},
        headers={"Authorization": f"Bearer {REVIEWER}"},
    )
    assert refused.status_code == 403
    page.click("#nav-workflows")
    page.fill("#new-name", "Not allowed")
    page.click("#new-button")
    expect(page.locator("#banner")).to_contain_text("Not allowed")
    expect(page.locator("#banner")).to_contain_text("Reviewers can read workflows")


# --- feedback on errors -----------------------------------------------------------------------


def test_missing_token_is_explained_and_can_be_entered(
    server: LiveServer, open_page: OpenPage
) -> None:
    page = open_page(server.url + "/", token=None)
    banner = page.locator("#banner")
    expect(banner).to_contain_text("needs a token")
    expect(page.locator("#token-form")).to_have_class(re.compile(r"\battention\b"))
    screenshot(page, "14-token-needed")
    page.fill("#token-input", EDITOR)
    page.click("#token-form button")
    expect(page.locator("#token-form")).not_to_have_class(re.compile(r"\battention\b"))
    expect(page.locator("#new-button")).to_be_enabled()
    page.fill("#new-name", "After the token")
    page.click("#new-button")
    page.wait_for_selector('.connection[data-state="open"]')
    expect(page.locator("#workflow-title")).to_have_text("After the token")


def test_a_turn_waits_in_line_on_a_busy_workflow_and_beyond_the_line_is_busy(
    server: LiveServer, open_page: OpenPage
) -> None:
    page, created = open_session(server, open_page)
    lock = server.services.lock
    workflow_id = created["id"]
    handle = server.call(lock.acquire(workflow_id, ttl_s=30))
    assert handle is not None
    others = [f"another-turn-{n}" for n in range(server.services.settings.turn_queue_size)]
    try:
        for ticket in others:  # the line is full
            server.call(lock.join(workflow_id, ticket, ttl_s=30, max_queue=len(others)))
        page.fill("#chat-input", CREATE)
        page.press("#chat-input", "Enter")
        busy = page.locator('.msg.error[data-code="busy"]')
        expect(busy).to_contain_text("Another turn is running")
        page.wait_for_selector('body[data-turn="idle"]')
        expect(page.locator("#send-button")).to_be_enabled()
        screenshot(page, "15-busy")
        for ticket in others:
            server.call(lock.leave(workflow_id, ticket))
        page.fill("#chat-input", CREATE)
        page.press("#chat-input", "Enter")
        queued = page.locator(".msg.note.queued")
        expect(queued).to_contain_text("yours starts next")
        expect(queued).to_have_attribute("data-position", "1")
        screenshot(page, "15-queued")
    finally:
        for ticket in others:
            server.call(lock.leave(workflow_id, ticket))
        server.call(handle.release())
    at_version(page, 2)  # its turn came once the other ended
    expect(page.locator(".msg.note.queued")).to_have_count(0)


@pytest.fixture
def restartable(tmp_path: Path) -> Any:
    with LiveServer(tmp_path, tokens=TOKENS) as live:
        yield live


def _commit_while_offline(server: LiveServer, workflow_id: str, yaml: str) -> None:
    """Write a version straight into the database (the server is down)."""

    async def commit() -> None:
        engine = create_engine(f"sqlite:///{server.folder / 'planwright.db'}")
        try:
            await Store(engine).commit_version(
                workflow_id,
                yaml=yaml,
                name="Changed while offline",
                expected_version=1,
                author="someone-else",
                session_id=None,
                turn_id=None,
                tool="put",
                summary="Renamed while the page was offline",
            )
        finally:
            await engine.dispose()

    failure: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(commit())
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    assert not failure, failure


def test_lost_connection_reconnects_and_catches_up(
    restartable: LiveServer, open_page: OpenPage
) -> None:
    page, created = open_session(restartable, open_page, yaml=CODED_DOC)
    at_version(page, 1)

    current = restartable.request("GET", f"/v1/workflows/{created['id']}", EDITOR)["yaml"]
    restartable.stop()
    expect(page.locator("#connection")).to_have_attribute("data-state", "lost")
    expect(page.locator("#banner")).to_contain_text("Connection lost")
    expect(page.locator("#send-button")).to_be_disabled()
    screenshot(page, "16-connection-lost")

    renamed = current.replace("name: Referral intake", "name: Changed while offline")
    _commit_while_offline(restartable, created["id"], renamed)
    restartable.start()

    page.wait_for_selector('.connection[data-state="open"]', timeout=30_000)
    at_version(page, 2)
    expect(page.locator("#workflow-title")).to_have_text("Changed while offline")
    expect(page.locator("#banner")).to_contain_text("Reconnected")
    expect(page.locator("#versions li.version").first).to_contain_text("while the page was")
    expect(page.locator("#diff-view .d-add")).to_have_text(["+ name: Changed while offline"])
    screenshot(page, "17-reconnected-caught-up")
    send(page, "what does this workflow do")


def test_single_user_needs_no_token_and_draws_every_kind_of_edge(
    tmp_path: Path, open_page: OpenPage
) -> None:
    with LiveServer(tmp_path, tokens=None) as single:
        created = single.create_workflow(yaml=BRANCHING_DOC)
        page = open_page(single.url + "/", token=None)
        page.locator(f'tr[data-workflow-id="{created["id"]}"] button.open-edit').click()
        page.wait_for_selector('.connection[data-state="open"]')
        expect(page.locator("#banner")).to_be_hidden()
        expect(page.locator(".node.job")).to_have_count(7)
        expect(page.locator(".node.trigger .node-title")).to_have_text("⚡ Cron 0 6 * * *")
        # The cron trigger's next runs, stepped by the server (GET /v1/cron/next-runs).
        run = r"\w{3} \d{1,2} \w{3} 06:00"
        expect(page.locator(".next-runs")).to_have_text(
            re.compile(rf"^Next runs: {run}, {run} and {run} UTC$")
        )
        for key, kind, label in [
            ("fetch->check", "success", "on success"),
            ("check->alert", "failure", "on failure"),
            ("fetch->archive", "failure", "on failure"),
            ("check->prior", "js", "BlueCross HMO"),
            ("check->notify", "disabled", "on success (disabled)"),
            ("cron->fetch", "always", "always"),
        ]:
            edge = page.locator(f'.edge.{kind}[data-key="{key}"]')
            expect(edge).to_have_count(1)
            expect(edge.locator("title")).to_have_text(f"{key}: {label}")
        # Edges that skip rows (fetch->archive) are routed around the steps in between:
        # no edge passes through a step it does not connect, and no two steps overlap.
        assert page.evaluate(CROSSINGS) == {"edges": 7, "steps": 8, "through": [], "overlaps": []}
        expect(page.locator('.node.job[data-key="fetch"] .node-sub')).to_have_text(
            "http 6.4.0 · has code"
        )
        # Steps no trigger reaches never run in OpenFn: the loose step, and the one only a
        # disabled edge leads to, are marked, and a note names them.
        unreachable = page.locator(".node.job.unreachable")
        expect(unreachable).to_have_count(2)
        keys = unreachable.evaluate_all("nodes => nodes.map(n => n.dataset.key)")
        assert sorted(keys) == ["notify", "orphan"]
        expect(page.locator('.node.job[data-key="orphan"] title')).to_contain_text(
            "not reached from any trigger: it never runs"
        )
        expect(page.locator('.node.job[data-key="archive"]')).not_to_have_class(
            re.compile("unreachable")
        )
        expect(page.locator(".diagram-note")).to_have_text(
            "⚠ 2 steps are not reached from any trigger, so they never run: "
            "Notify patient, Orphan step."
        )
        screenshot(page, "18-single-user-branching")


def _big_workflow(steps: int) -> str:
    """A long intake chain whose every fifth step has a failure handler of its own."""
    jobs, edges = [], ["  cron->s0: {source_trigger: cron, target_job: s0, condition_type: always}"]
    main = [f"s{i}" for i in range(steps) if i % 5 != 4]
    for index, key in enumerate(main):
        jobs.append(f"  {key}: {{name: Step {key}, adaptor: '@openfn/language-http@7.2.10'}}")
        if index:
            previous = main[index - 1]
            edges.append(
                f"  {previous}->{key}: {{source_job: {previous}, target_job: {key}, "
                "condition_type: on_job_success}"
            )
    for i in range(4, steps, 5):
        source, key = f"s{i - 1}", f"s{i}"
        jobs.append(f"  {key}: {{name: Handle {key}, adaptor: '@openfn/language-common@3.3.4'}}")
        edges.append(
            f"  {source}->{key}: {{source_job: {source}, target_job: {key}, "
            "condition_type: on_job_failure}"
        )
    trigger = "triggers:\n  cron: {type: cron, cron_expression: '0 6 * * *', enabled: true}\n"
    return (
        "name: Big intake\njobs:\n"
        + "\n".join(jobs)
        + "\n"
        + trigger
        + ("edges:\n" + "\n".join(edges) + "\n")
    )


def test_a_200_step_workflow_lays_out_readably(tmp_path: Path, open_page: OpenPage) -> None:
    with LiveServer(tmp_path, tokens=None) as single:
        created = single.create_workflow(yaml=_big_workflow(200))
        page = open_page(single.url + "/", token=None)
        page.locator(f'tr[data-workflow-id="{created["id"]}"] button.open-edit').click()
        page.wait_for_selector('.connection[data-state="open"]')
        expect(page.locator(".node.job")).to_have_count(200)
        result = page.evaluate(CROSSINGS)
        assert (result["edges"], result["steps"]) == (200, 201)
        assert result["through"] == [] and result["overlaps"] == []
        # Labels never sit on a step: each label's centre is outside every step box.
        covered = page.evaluate(
            """() => {
              const boxes = [...document.querySelectorAll('.diagram-svg .node .node-box')]
                .map((b) => b.getBoundingClientRect());
              return [...document.querySelectorAll('.diagram-svg .edge-label rect')]
                .map((r) => r.getBoundingClientRect())
                .filter((l) => boxes.some((b) => {
                  const x = l.x + l.width / 2, y = l.y + l.height / 2;
                  return x > b.left && x < b.right && y > b.top && y < b.bottom;
                })).length;
            }"""
        )
        assert covered == 0
        screenshot(page, "19-200-steps")
