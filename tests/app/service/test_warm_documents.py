"""Turns reuse a document already parsed in this process: the one the previous turn
left, or the one a REST create or PUT just parsed, only while it is current."""

from __future__ import annotations

import functools
import weakref

import pytest
from fastapi.testclient import TestClient

from agents import runtime as agent_runtime
from agents.models import ScriptedModel
from tests.app.service.helpers import DOC, EDITOR, auth, connect, setup, turn, until
from tools.document import WorkflowDocument, emitter

S = ScriptedModel


def test_no_turn_parses_or_emits_again_what_this_process_already_parsed(
    client: TestClient, model: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    parses: list[int] = []
    dumps: list[int] = []

    class Counting:
        """Stands in for WorkflowDocument inside agents.runtime only (not REST)."""

        @staticmethod
        def from_yaml(text: str, **kwargs: object) -> WorkflowDocument:
            parses.append(len(text))
            return WorkflowDocument.from_yaml(text, **kwargs)  # type: ignore[arg-type]

    real_dump = emitter.dump_yaml

    def counting_dump(*args: object, **kwargs: object) -> str:
        dumps.append(1)
        return real_dump(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(agent_runtime, "WorkflowDocument", Counting)
    monkeypatch.setattr(emitter, "dump_yaml", counting_dump)
    model.push(
        S.tool_calls(("update_workflow", {"name": "One"})),
        S.text("Renamed."),
        S.tool_calls(("update_workflow", {"name": "Two"})),
        S.text("Renamed again."),
        S.text("Hello."),
        S.text("Hello again."),
    )
    workflow_id, session_id = setup(client)  # a REST create
    with connect(client, session_id) as ws:
        before = len(dumps)
        ws.send_json(turn("rename to One"))
        until(ws, "turn.completed")
        assert parses == [], "the first turn parsed what the REST create had just parsed"
        # Renaming re-emits the name fragment only, not the whole document.
        assert 0 < len(dumps) - before <= 2, len(dumps) - before
        ws.send_json(turn("rename to Two"))
        until(ws, "turn.completed")
        assert parses == [], "the second turn parsed the document again"
        put = client.put(
            f"/v1/workflows/{workflow_id}",
            json={"yaml": DOC.replace("Referral intake", "Three"), "expected_version": 3},
            headers=auth(EDITOR),
        )
        assert put.status_code == 200
        ws.send_json(turn("hello"))
        until(ws, "turn.completed")
        assert parses == [], "the turn after a PUT parsed what the PUT had just parsed"
        assert "Three" in model.requests[-1].messages[-1]["content"]
        # Changed behind this process's back (another worker): parsed afresh.
        services = client.app.state.services  # type: ignore[attr-defined]
        commit = functools.partial(
            services.store.commit_version,
            workflow_id,
            yaml=DOC.replace("Referral intake", "Four"),
            name="Four",
            expected_version=4,
            tool="put",
        )
        assert client.portal.call(commit) == 5  # type: ignore[union-attr]
        ws.send_json(turn("hello"))
        until(ws, "turn.completed")
    assert len(parses) == 1, "a document changed elsewhere must be parsed afresh"
    assert "Four" in model.requests[-1].messages[-1]["content"]
    stored = client.get(f"/v1/workflows/{workflow_id}", headers=auth(EDITOR)).json()
    assert stored["name"] == "Four" and stored["version"] == 5


def test_a_put_lets_go_of_the_document_it_replaces_before_it_commits(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Freeing a large parsed document takes the event loop milliseconds: it is done
    before the commit, not while the new version fans out to watchers."""
    services = client.app.state.services  # type: ignore[attr-defined]
    created = client.post("/v1/workflows", json={"yaml": DOC}, headers=auth(EDITOR)).json()
    kept = services.turns._warm[created["id"]][0]
    replaced = weakref.ref(kept)
    del kept
    real_commit = services.publisher.commit_and_publish
    alive_at_commit: list[bool] = []

    async def commit_and_publish(*args: object, **kwargs: object) -> int:
        alive_at_commit.append(replaced() is not None)
        return await real_commit(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(services.publisher, "commit_and_publish", commit_and_publish)
    put = client.put(
        f"/v1/workflows/{created['id']}",
        json={"yaml": DOC.replace("Referral intake", "Renamed"), "expected_version": 1},
        headers=auth(EDITOR),
    )
    assert put.status_code == 200, put.text
    assert alive_at_commit == [False]
    # The PUT's own document is kept for the next turn instead.
    doc, version = services.turns._warm[created["id"]]
    assert version == 2 and doc.name == "Renamed"
