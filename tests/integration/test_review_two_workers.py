"""Review mode across two uvicorn workers sharing Redis and Postgres (DESIGN §5c).

A review-mode turn on worker A ends with a proposal and commits nothing: a live view
on worker B gets no frame. The proposal is a checkpoint in the shared Postgres, so
B shows it on reload and applies it; only then does the view see one new version.
The workers run the OFFLINE model (nothing reaches the fake Messages API).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.integration.helpers import (
    Cluster,
    Rest,
    WorkerProcess,
    assert_silent,
    chat,
    recv,
    recv_until,
    turn,
    watch,
)
from tools.document import WorkflowDocument

pytestmark = pytest.mark.integration

TURN_TIMEOUT_S = 30.0


@pytest.fixture(scope="module")
def offline_workers(cluster: Cluster) -> Iterator[tuple[WorkerProcess, WorkerProcess]]:
    a, b = cluster.start("review-a", "review-b", ANTHROPIC_API_KEY="")
    yield a, b


async def test_a_proposal_made_on_a_is_applied_on_b_and_watchers_see_only_that(
    cluster: Cluster,
    offline_workers: tuple[WorkerProcess, WorkerProcess],
    fake_api: FakeAnthropicServer,
) -> None:
    a, b = offline_workers
    async with Rest(a, cluster) as rest_a, Rest(b, cluster) as rest_b:
        workflow = await rest_a.create_workflow()
        session = await rest_a._json(
            "POST",
            "/v1/sessions",
            201,
            json={"workflow_id": workflow["id"], "read_only": False, "review": True},
        )
        assert session["review"] is True
        async with watch(b, workflow["id"], since_version=1) as view:
            async with chat(a, session["id"]) as ws:
                await ws.send(turn("add a step called 'Notify clinic' with gmail after check"))
                frames = await recv_until(ws, "proposal", timeout_s=TURN_TIMEOUT_S)
            assert not [f for f in frames if f["type"] in ("workflow", "error")], frames
            proposal = frames[-1]
            assert proposal["base_version"] == 1 and proposal["changes"]
            draft = WorkflowDocument.from_yaml(proposal["yaml"])
            assert any(j.name == "Notify clinic" for j in draft.structure.jobs.values())
            await assert_silent(view, within_s=1.0)  # nothing was published
            assert (await rest_b.workflow(workflow["id"]))["version"] == 1

            detail = await rest_b._json("GET", f"/v1/sessions/{session['id']}", 200)
            pending = detail["pending_confirmation"]
            assert pending["request_id"] == proposal["request_id"]
            assert pending["proposal"]["yaml"] == proposal["yaml"]
            every = [c["id"] for c in proposal["changes"]]
            async with chat(b, session["id"]) as ws:
                answer = {"type": "review", "request_id": proposal["request_id"], "accepted": every}
                await ws.send(json.dumps(answer))
                applied = await recv_until(ws, "turn.completed", timeout_s=TURN_TIMEOUT_S)
            assert not [f for f in applied if f["type"] == "error"], applied
            (committed,) = [f for f in applied if f["type"] == "workflow"]
            assert committed["version"] == 2 and committed["yaml"] == proposal["yaml"]
            seen = await recv(view)
            assert seen["type"] == "workflow" and seen["version"] == 2
            await assert_silent(view, within_s=0.5)
        stored = await rest_a.workflow(workflow["id"])
        assert stored["version"] == 2 and stored["yaml"] == proposal["yaml"]
        assert [v["version"] for v in await rest_a.versions(workflow["id"])] == [2, 1]
    assert fake_api.requests == []
