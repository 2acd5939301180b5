"""A PUT or revert that changes nothing records nothing; reverts race safely.

An identical PUT answers ``unchanged: true`` with no version and no ``workflow``
event. A revert takes ``expected_version`` (409 when stale, as PUT); without it a
revert that loses a race to another write is committed again on the new head, so
twenty simultaneous reverts all succeed, with contiguous versions.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fastapi.testclient import TestClient

from agents.api import Commit
from tests.app.service.helpers import DOC, EDITOR, auth, create_workflow


def _doc(i: int) -> str:
    return DOC.replace("name: Referral intake", f"name: Referral intake {i}", 1)


def _put(client: TestClient, wid: str, yaml: str, expected: int) -> Any:
    return client.put(
        f"/v1/workflows/{wid}",
        json={"yaml": yaml, "expected_version": expected},
        headers=auth(EDITOR),
    )


def _versions(client: TestClient, wid: str) -> list[dict[str, Any]]:
    response = client.get(f"/v1/workflows/{wid}/versions", headers=auth(EDITOR))
    assert response.status_code == 200
    listed: list[dict[str, Any]] = response.json()
    return sorted(listed, key=lambda v: int(v["version"]))  # the API lists newest first


def test_an_identical_put_records_no_version_and_publishes_nothing(client: TestClient) -> None:
    created = create_workflow(client)
    wid = created["id"]
    with client.websocket_connect(f"/v1/workflows/{wid}/watch?token={EDITOR}") as watcher:
        assert watcher.receive_json()["version"] == 1
        same = _put(client, wid, created["yaml"], 1)
        assert same.status_code == 200, same.text
        body = same.json()
        assert body["unchanged"] is True
        assert (body["version"], body["yaml"]) == (1, created["yaml"])
        assert [v["version"] for v in _versions(client, wid)] == [1]
        # Also when the client's version is stale: the document already is what it asked.
        changed = _put(client, wid, _doc(2), 1)
        assert changed.json()["unchanged"] is False and changed.json()["version"] == 2
        again = _put(client, wid, changed.json()["yaml"], 1)
        assert again.status_code == 200 and again.json()["unchanged"] is True
        # The watcher's next event is version 2: nothing was published for the others.
        assert watcher.receive_json()["version"] == 2
        _put(client, wid, _doc(3), 2)
        assert watcher.receive_json()["version"] == 3
    assert [v["version"] for v in _versions(client, wid)] == [1, 2, 3]


def test_a_put_that_differs_by_one_byte_is_a_version(client: TestClient) -> None:
    created = create_workflow(client)
    response = _put(client, created["id"], created["yaml"] + "\n", 1)
    assert response.status_code == 200
    assert (response.json()["version"], response.json()["unchanged"]) == (2, False)


def test_revert_takes_expected_version(client: TestClient) -> None:
    wid = create_workflow(client)["id"]
    assert _put(client, wid, _doc(2), 1).status_code == 200
    stale = client.post(
        f"/v1/workflows/{wid}/revert",
        json={"version": 1, "expected_version": 1},
        headers=auth(EDITOR),
    )
    assert stale.status_code == 409, stale.text
    assert stale.json()["error"]["code"] == "version_conflict"
    fresh = client.post(
        f"/v1/workflows/{wid}/revert",
        json={"version": 1, "expected_version": 2},
        headers=auth(EDITOR),
    )
    assert fresh.status_code == 200, fresh.text
    assert (fresh.json()["version"], fresh.json()["yaml"]) == (3, DOC)
    # Reverting to what the workflow already is records nothing.
    same = client.post(f"/v1/workflows/{wid}/revert", json={"version": 1}, headers=auth(EDITOR))
    assert same.status_code == 200 and same.json()["unchanged"] is True
    assert same.json()["version"] == 3


def test_twenty_simultaneous_reverts_all_succeed(client: TestClient) -> None:
    wid = create_workflow(client)["id"]
    texts = {1: DOC}
    for i in (2, 3, 4):
        response = _put(client, wid, _doc(i), i - 1)
        assert response.status_code == 200
        texts[i] = response.json()["yaml"]
    targets = [1 + (n % 4) for n in range(20)]
    barrier = threading.Barrier(len(targets))

    def revert(version: int) -> Any:
        barrier.wait()
        return client.post(
            f"/v1/workflows/{wid}/revert", json={"version": version}, headers=auth(EDITOR)
        )

    with ThreadPoolExecutor(len(targets)) as pool:
        responses = list(pool.map(revert, targets))
    assert [r.status_code for r in responses] == [200] * len(targets), [
        r.text for r in responses if r.status_code != 200
    ]
    recorded = [r for r in responses if not r.json()["unchanged"]]
    assert len(recorded) >= 3  # the head was at 4: at least the other three were written
    listed = _versions(client, wid)
    assert [v["version"] for v in listed] == list(range(1, 5 + len(recorded)))
    for version in listed[4:]:  # each revert's version holds exactly its target's text
        full = client.get(
            f"/v1/workflows/{wid}/versions/{version['version']}", headers=auth(EDITOR)
        )
        assert full.json()["yaml"] in texts.values()
    for response, target in zip(responses, targets, strict=True):
        if not response.json()["unchanged"]:
            assert response.json()["yaml"] == texts[target]


def test_a_revert_answers_with_its_own_version_when_another_write_lands_right_after(
    client: TestClient, monkeypatch: Any
) -> None:
    """The answer is the version this request wrote, not whatever the head is by the time
    the answer is built (a concurrent write can land in between)."""
    wid = create_workflow(client)["id"]
    second = _put(client, wid, _doc(2), 1).json()
    publisher = client.app.state.services.publisher  # type: ignore[attr-defined]
    commit_and_publish = publisher.commit_and_publish
    racing: list[int] = []

    async def then_another_write(workflow_id: str, change: Any, **kwargs: Any) -> int:
        written = await commit_and_publish(workflow_id, change, **kwargs)
        if not racing:  # once: someone else's write lands straight after ours
            racing.append(written)
            other = Commit(
                yaml=_doc(9),
                name=None,
                base_version=written,
                tool="test",
                changes=[],
                summary="a concurrent write",
            )
            await commit_and_publish(workflow_id, other, author="someone else")
        return written

    monkeypatch.setattr(publisher, "commit_and_publish", then_another_write)
    reverted = client.post(f"/v1/workflows/{wid}/revert", json={"version": 1}, headers=auth(EDITOR))
    assert reverted.status_code == 200, reverted.text
    body = reverted.json()
    assert (body["version"], body["unchanged"]) == (3, False)
    assert body["yaml"] == DOC and body["yaml"] != second["yaml"]
    assert [v["version"] for v in _versions(client, wid)] == [1, 2, 3, 4]
