"""A plan turn across two uvicorn workers sharing Redis and Postgres (DESIGN §5a).

The workflow-turn counterpart is ``test_two_workers``; here the workers run the
OFFLINE model (no API key: nothing reaches the fake Messages API), which plans a
spec in its documented format and builds each planned workflow. A plan paused at
review on worker A is answered on worker B: the pause is a checkpoint in the shared
Postgres, so B resumes it, builds there and sends every frame of the build.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.integration.helpers import Cluster, Rest, WorkerProcess, chat, recv_until

pytestmark = pytest.mark.integration

SPEC = """# Referral intake system

Referrals arrive from the clinic portal and their coverage is checked.

## Intake
Takes in new referrals from the clinic portal.
- Fetch the referral from the portal over http
- Save the referral

## Coverage check
Checks that the member's insurance covers the referral.
After Intake.
- Look up the member's insurance over http
- Record the coverage decision
"""
KEYS = ["intake", "coverage-check"]
BUILD_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def offline_workers(cluster: Cluster) -> Iterator[tuple[WorkerProcess, WorkerProcess]]:
    """Workers A and B on the offline model (an empty key: no Anthropic client)."""
    a, b = cluster.start("plan-a", "plan-b", ANTHROPIC_API_KEY="")
    yield a, b


def _checkpoints(database_url: str) -> tuple[set[str], int]:
    """The threads with a checkpoint, and the rows of every checkpoint table."""
    with psycopg.connect(database_url) as db:
        threads = {str(r[0]) for r in db.execute("SELECT DISTINCT thread_id FROM checkpoints")}
        rows = sum(
            db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # type: ignore[index]
            for table in ("checkpoints", "checkpoint_writes", "checkpoint_blobs")
        )
    return threads, rows


def _plan_turn(content: str) -> str:
    return json.dumps(
        {"type": "turn", "content": content, "context": {"page": "workflow"}, "mode": "plan"}
    )


async def test_a_plan_paused_on_worker_a_is_approved_and_built_on_worker_b(
    cluster: Cluster,
    offline_workers: tuple[WorkerProcess, WorkerProcess],
    fake_api: FakeAnthropicServer,
) -> None:
    a, b = offline_workers
    async with Rest(a, cluster) as rest_a, Rest(b, cluster) as rest_b:
        project = await rest_a._json("POST", "/v1/projects", 201, json={"name": "Referrals"})
        cluster.workflow_ids.add(f"plan:{project['id']}")  # its plan lock's key, cleaned up
        session = await rest_a._json(
            "POST", "/v1/sessions", 201, json={"project_id": project["id"]}
        )
        async with chat(a, session["id"]) as ws:
            await ws.send(_plan_turn(SPEC))
            on_a = await recv_until(ws, "plan.proposed", timeout_s=BUILD_TIMEOUT_S)
        proposed = on_a[-1]
        turn_id = proposed["turn_id"]
        assert [w["key"] for w in proposed["plan"]["workflows"]] == KEYS
        # Paused: its one checkpoint thread is in the shared database, and B sees the review.
        threads, _ = _checkpoints(cluster.database_url)
        assert threads == {turn_id}
        pending = (await rest_b._json("GET", f"/v1/sessions/{session['id']}", 200))[
            "pending_confirmation"
        ]
        assert pending["request_id"] == proposed["request_id"]
        assert pending["turn_id"] == turn_id

        async with chat(b, session["id"]) as ws:
            confirm = {"type": "confirm", "request_id": proposed["request_id"], "approved": True}
            await ws.send(json.dumps(confirm))
            on_b = await recv_until(ws, "turn.completed", timeout_s=BUILD_TIMEOUT_S, limit=2000)

        assert not [f for f in on_b if f["type"] == "error"], on_b
        assert {f.get("turn_id") for f in on_b} == {turn_id}  # the paused turn, resumed
        progress = [(f["workflow_key"], f["status"]) for f in on_b if f["type"] == "plan.progress"]
        assert progress == [(k, s) for k in KEYS for s in ("building", "built")]
        ids = {
            f["workflow_key"]: f["workflow_id"]
            for f in on_b
            if f["type"] == "plan.progress" and f["status"] == "built"
        }
        cluster.workflow_ids.update(ids.values())
        shown: dict[str, list[int]] = {}
        for frame in on_b:
            if frame["type"] == "workflow":
                shown.setdefault(frame["workflow_id"], []).append(frame["version"])
        assert set(shown) == set(ids.values())
        message = next(f["text"] for f in reversed(on_b) if f["type"] == "message")
        assert "Built 2 of 2 workflows" in message

        # Read back through A: the plan is built and each workflow is at the last
        # version B announced, every version from 2 on announced by B, none skipped.
        stored = await rest_a._json("GET", f"/v1/projects/{project['id']}", 200)
        assert stored["plan"]["status"] == "built"
        assert {k: o["workflow_id"] for k, o in stored["plan"]["workflows"].items()} == ids
        assert {w["id"]: w["version"] for w in stored["workflows"]} == {
            wid: versions[-1] for wid, versions in shown.items()
        }
        for wid, versions in shown.items():
            history = [v["version"] for v in await rest_a.versions(wid)]
            assert history == list(range(versions[-1], 0, -1))
            assert versions == list(range(2, versions[-1] + 1))  # 1: created empty
            assert (await rest_a.workflow(wid))["version"] == versions[-1]
        detail: dict[str, Any] = await rest_a._json("GET", f"/v1/sessions/{session['id']}", 200)
        assert detail["pending_confirmation"] is None
        assert [t["status"] for t in detail["turns"]] == ["completed"]
        (answer,) = detail["confirmations"]
        assert answer["approved"] is True

    # Finished: B's run left no checkpoint behind in the shared database.
    assert _checkpoints(cluster.database_url) == (set(), 0)
    assert fake_api.requests == []  # the offline model: no API was called
