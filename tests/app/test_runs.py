"""RunService with a fake runner, on a real SQLite store: versions, credentials, slots,
the chat tool's runs, the socket's frames and the words "fix it" gets."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agents.events import RunProgressEvent
from agents.testrun import ProgressCallback
from agents.testrun.install import OpenFnRuntimeUnavailable
from app.auth import Principal
from app.errors import NotFoundError
from app.runs import (
    FIX_INPUT_CHARS,
    RunFailedError,
    RunPolicy,
    RunsBusyError,
    RunService,
    credential_values,
    without_credentials,
)
from app.store import SessionRecord, Store, create_engine, migrate
from app.ws.protocol import RunFrame, ServerFrame
from tests.waiting import wait_until_async
from tools.document import WorkflowDocument
from tools.errors import ToolInputError
from tools.testrun import RequestRecord, RunRequest, RunStatus, StepRun, TestRun

DOC_V1 = "name: demo\njobs: {}\n"
DOC_V2 = "name: demo v2\njobs: {}\n"
PASSWORD = "hunter2-very-secret"
TOKEN = "tok-5f4dcc3b5aa765d61d83"
ANA = Principal(subject="tok_ana", role="reviewer", name="Ana")


class FakeRunner:
    """Records what it was asked; reports one step that saw (and leaked) the credentials."""

    def __init__(self, *, status: RunStatus = "failed", gate: asyncio.Event | None = None) -> None:
        self.calls: list[tuple[str, RunRequest, str]] = []
        self.status = status
        self.gate = gate
        self.running = 0
        self.most_at_once = 0

    async def run(
        self,
        workflow: WorkflowDocument,
        request: RunRequest,
        *,
        run_id: str,
        on_progress: ProgressCallback | None = None,
        **_: Any,
    ) -> TestRun:
        self.calls.append((workflow.to_yaml(), request, run_id))
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            if on_progress is not None:
                await on_progress(
                    RunProgressEvent(run_id=run_id, step_key="check", status="started")
                )
            if self.gate is not None:
                await self.gate.wait()
            # As the runner does: a configuration in the input state is credentials too.
            config = request.configuration or request.input.get("configuration") or {}
            state = {**request.input, "configuration": config}
            failed = self.status == "failed"
            if on_progress is not None:
                done = "failed" if failed else "succeeded"
                await on_progress(RunProgressEvent(run_id=run_id, step_key="check", status=done))
            return TestRun(
                run_id=run_id,
                status=self.status,
                steps=[
                    StepRun(
                        key="check",
                        name="Check coverage",
                        status="failed" if failed else "succeeded",
                        duration_ms=4,
                        input=state,
                        output={"data": {"echo": json.dumps(config)}},
                        error=f"401 with password {config.get('password')}" if failed else None,
                        logs=[f"logging in as ana:{config.get('password')}", "\ud800 lone"],
                    )
                ],
                requests=[
                    RequestRecord(
                        step_key="check",
                        method="GET",
                        url=f"{config.get('baseUrl', 'http://x')}/p?token={config.get('access_token')}",
                        status=None,
                        matched=False,
                    )
                ],
                final_state=state,
                summary=f"Failed at Check coverage ({config.get('password')})",
            )
        finally:
            self.running -= 1


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    engine = create_engine(f"sqlite:///{tmp_path / 'runs.db'}")
    await migrate(engine)
    try:
        yield Store(engine)
    finally:
        await engine.dispose()


async def _workflow(store: Store) -> str:
    record = await store.create_workflow(name="Demo", yaml=DOC_V1)
    await store.commit_version(record.id, yaml=DOC_V2, expected_version=1, tool="put")
    return record.id


async def _session(store: Store, workflow_id: str) -> SessionRecord:
    return await store.create_session(workflow_id=workflow_id, read_only=True)


CONFIG = {"baseUrl": "https://clinic.example.org", "username": "ana", "password": PASSWORD}
CONFIG_WITH_TOKEN = {**CONFIG, "access_token": TOKEN}


async def test_a_run_is_stored_with_the_version_it_ran_and_who_ran_it(store: Store) -> None:
    runner = FakeRunner(status="succeeded")
    service = RunService(store=store, runner=runner)
    workflow_id = await _workflow(store)

    current = await service.run(workflow_id, RunRequest(), author="Ana")
    older = await service.run(workflow_id, RunRequest(version=1), author="Ben")

    assert [call[0] for call in runner.calls] == [DOC_V2, DOC_V1]
    assert (current.version, current.workflow_id, current.created_by) == (2, workflow_id, "Ana")
    assert (older.version, older.created_by) == (1, "Ben")
    assert current.run_id == runner.calls[0][2] and current.run_id != older.run_id
    assert await service.get(older.run_id) == older
    listed = await service.list(workflow_id)
    assert [r.run_id for r in listed] == [older.run_id, current.run_id]
    stored = await store.get_test_run(older.run_id)
    assert stored is not None and (stored.version, stored.session_id) == (1, None)


async def test_unknown_workflows_versions_and_runs_are_not_found(store: Store) -> None:
    service = RunService(store=store, runner=FakeRunner())
    workflow_id = await _workflow(store)
    with pytest.raises(NotFoundError):
        await service.run("missing", RunRequest(), author=None)
    with pytest.raises(NotFoundError, match="no version 7"):
        await service.run(workflow_id, RunRequest(version=7), author=None)
    with pytest.raises(NotFoundError):
        await service.get("missing")
    with pytest.raises(NotFoundError):
        await service.list("missing")


async def test_the_list_is_bounded_by_the_setting(store: Store) -> None:
    service = RunService(store=store, runner=FakeRunner(), policy=RunPolicy(list_limit=2))
    workflow_id = await _workflow(store)
    made = [(await service.run(workflow_id, RunRequest(), author=None)).run_id for _ in range(3)]
    assert [r.run_id for r in await service.list(workflow_id)] == made[:0:-1]
    assert [r.run_id for r in await service.list(workflow_id, limit=1)] == made[2:]
    assert len(await service.list(workflow_id, limit=500)) == 2


async def test_the_timeout_defaults_to_the_setting_and_is_capped(store: Store) -> None:
    runner = FakeRunner()
    policy = RunPolicy(timeout_s=7, max_timeout_s=30)
    service = RunService(store=store, runner=runner, policy=policy)
    workflow_id = await _workflow(store)
    await service.run(workflow_id, RunRequest(), author=None)
    await service.run(workflow_id, RunRequest(timeout_s=12), author=None)
    assert [call[1].timeout_s for call in runner.calls] == [7, 12]
    with pytest.raises(ToolInputError) as refused:
        await service.run(workflow_id, RunRequest(timeout_s=31), author=None)
    assert refused.value.code == "timeout_too_long"
    assert len(runner.calls) == 2


async def test_no_credential_value_is_stored_returned_or_logged(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    runner = FakeRunner()
    service = RunService(store=store, runner=runner)
    workflow_id = await _workflow(store)
    session = await _session(store, workflow_id)
    frames: list[ServerFrame] = []

    async def send(frame: ServerFrame) -> None:
        frames.append(frame)

    returned = await service.run(
        workflow_id,
        RunRequest(input={"data": {"nhs": "943 476 5919"}}, configuration=CONFIG_WITH_TOKEN),
        author="Ana",
    )
    await service.on_socket(session, ANA, RunFrame(type="run"), send)
    # The runner itself was given the credentials: they are for the run.
    assert runner.calls[0][1].configuration == CONFIG_WITH_TOKEN

    rows = await store.list_test_runs(workflow_id, limit=10)
    texts = [row.model_dump_json() for row in rows]
    texts += [returned.model_dump_json(), *(json.dumps(f.wire()) for f in frames)]
    texts += [record.getMessage() for record in caplog.records]
    for text in texts:
        assert PASSWORD not in text
        assert TOKEN not in text
    step = returned.steps[0]
    assert "configuration" not in step.input and "configuration" not in returned.final_state
    assert step.input == {"data": {"nhs": "943 476 5919"}}  # the sample itself is kept
    assert step.error == "401 with password ***"
    # The user name is a credential value too; a lone surrogate cannot be stored.
    assert step.logs == ["logging in as ***:***", "\ufffd lone"]
    # Where the service is is not a credential: the request's address stays readable.
    assert returned.requests[0].url == "https://clinic.example.org/p?token=***"


async def test_a_runner_failure_quoting_a_credential_is_masked(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    workflow_id = await _workflow(store)

    class Crashing:
        def __init__(self, error: Exception) -> None:
            self.error = error

        async def run(self, workflow: WorkflowDocument, request: RunRequest, **_: Any) -> TestRun:
            raise self.error

    request = RunRequest(configuration=CONFIG)
    unexpected = RunService(store=store, runner=Crashing(RuntimeError(f"boom {PASSWORD}")))
    with pytest.raises(RunFailedError) as failed:
        await unexpected.run(workflow_id, request, author=None)
    assert PASSWORD not in failed.value.message
    unavailable = OpenFnRuntimeUnavailable(f"run.mjs printed {PASSWORD}")
    with pytest.raises(OpenFnRuntimeUnavailable) as missing:
        await RunService(store=store, runner=Crashing(unavailable)).run(
            workflow_id, request, author=None
        )
    assert missing.value.message == "run.mjs printed ***"
    assert any("boom ***" in r.getMessage() for r in caplog.records)  # logged, masked
    assert all(PASSWORD not in r.getMessage() for r in caplog.records)
    assert await store.list_test_runs(workflow_id, limit=10) == []  # nothing stored


async def test_a_configuration_inside_the_input_is_a_credential_too(store: Store) -> None:
    service = RunService(store=store, runner=FakeRunner())
    workflow_id = await _workflow(store)
    given = {"data": {"a": 1}, "configuration": {"password": PASSWORD}}
    run = await service.run(workflow_id, RunRequest(input=given), author=None)
    assert PASSWORD not in run.model_dump_json()
    assert run.steps[0].logs[0] == "logging in as ana:***"


def test_credential_values_skip_addresses_but_not_addresses_with_a_password() -> None:
    values = credential_values(
        {
            "baseUrl": "https://h.example.org",
            "url": "https://u:pw@h.example.org",
            "nested": {"pin": 98765, "list": ["tok-a1"]},
            "short": "ab",
            "flag": True,
        }
    )
    assert values == ["https://u:pw@h.example.org", "tok-a1", "98765"]
    run = TestRun(run_id="r", status="succeeded", final_state={"pin": 98765, "n": 98766})
    assert without_credentials(run, {"pin": 98765}).final_state == {"pin": "***", "n": 98766}


async def test_runs_beyond_the_workers_slots_wait_then_are_busy(store: Store) -> None:
    gate = asyncio.Event()
    runner = FakeRunner(gate=gate)
    service = RunService(
        store=store, runner=runner, policy=RunPolicy(concurrency=2, queue_wait_s=0.1)
    )
    workflow_id = await _workflow(store)
    first = [
        asyncio.create_task(service.run(workflow_id, RunRequest(), author=None)) for _ in range(2)
    ]
    await wait_until_async(lambda: len(runner.calls) == 2, timeout=10, message="runs not started")
    with pytest.raises(RunsBusyError) as busy:  # both slots stay taken through its wait
        await service.run(workflow_id, RunRequest(), author=None)
    assert busy.value.code == "busy"
    gate.set()
    await asyncio.gather(*first)
    assert len(runner.calls) == 2 and runner.most_at_once == 2


async def test_a_run_waiting_for_a_slot_gets_the_first_one_freed(store: Store) -> None:
    """The wait is long (a slot freed within it is what is tested, not a race against a
    0.1 s wait: the slot used to be freed 20 ms after the run started waiting)."""
    gate = asyncio.Event()
    runner = FakeRunner(gate=gate)
    service = RunService(
        store=store, runner=runner, policy=RunPolicy(concurrency=2, queue_wait_s=60)
    )
    workflow_id = await _workflow(store)
    first = [
        asyncio.create_task(service.run(workflow_id, RunRequest(), author=None)) for _ in range(2)
    ]
    await wait_until_async(lambda: len(runner.calls) == 2, timeout=10, message="runs not started")
    waiting = asyncio.create_task(service.run(workflow_id, RunRequest(), author=None))
    await wait_until_async(
        lambda: service._slots._waiters, timeout=10, message="the third run never waited"
    )
    assert len(runner.calls) == 2
    gate.set()  # the first two finish: the third gets a slot
    await asyncio.gather(*first, waiting)
    assert len(runner.calls) == 3 and runner.most_at_once == 2


async def test_the_chat_tools_runs_are_the_turns_document_stored_with_the_turn(
    store: Store,
) -> None:
    runner = FakeRunner(status="succeeded")
    service = RunService(store=store, runner=runner)
    workflow_id = await _workflow(store)
    session = await _session(store, workflow_id)
    seen: list[RunProgressEvent] = []

    async def progress(event: RunProgressEvent) -> None:
        seen.append(event)

    draft = "name: a draft\njobs: {}\n"
    turn_runs = service.for_turn(session, ANA)
    run = await turn_runs.run(
        yaml=draft,
        version=2,
        request=RunRequest(),
        turn_id="turn-1",
        on_progress=progress,
        draft=True,
    )
    assert runner.calls[0][0] == draft and run.draft
    assert [(e.step_key, e.status) for e in seen] == [("check", "started"), ("check", "succeeded")]
    assert {e.run_id for e in seen} == {run.run_id}
    stored = await store.get_test_run(run.run_id)
    assert stored is not None
    assert (stored.session_id, stored.turn_id, stored.version, stored.created_by) == (
        session.id,
        "turn-1",
        2,
        "Ana",
    )
    committed = await turn_runs.run(yaml=DOC_V2, version=2, request=RunRequest(), turn_id="t2")
    assert not committed.draft and committed.version == 2


async def test_the_socket_gets_progress_then_the_run_or_one_error(store: Store) -> None:
    service = RunService(store=store, runner=FakeRunner(status="succeeded"))
    workflow_id = await _workflow(store)
    session = await _session(store, workflow_id)
    frames: list[dict[str, Any]] = []

    async def send(frame: ServerFrame) -> None:
        frames.append(frame.wire())

    await service.on_socket(
        session, ANA, RunFrame(type="run", version=1, input={"data": {"a": 1}}), send
    )
    kinds = [(f["type"], f.get("status")) for f in frames]
    assert kinds == [
        ("run.progress", "started"),
        ("run.progress", "succeeded"),
        ("run.completed", None),
    ]
    run = frames[-1]["run"]
    assert (run["version"], run["steps"][0]["input"]) == (1, {"data": {"a": 1}})
    assert all("turn_id" not in f for f in frames)
    stored = await store.get_test_run(run["run_id"])
    assert stored is not None and stored.session_id == session.id and stored.turn_id is None

    frames.clear()
    await service.on_socket(session, ANA, RunFrame(type="run", version=9), send)
    assert [(f["type"], f["code"]) for f in frames] == [("error", "not_found")]


async def test_fix_it_gets_the_sessions_last_run_only_when_it_failed(store: Store) -> None:
    failing = RunService(store=store, runner=FakeRunner(status="failed"))
    passing = RunService(store=store, runner=FakeRunner(status="succeeded"))
    workflow_id = await _workflow(store)
    session = await _session(store, workflow_id)
    other = await _session(store, workflow_id)
    assert await failing.last_failed_run(session) is None

    big = {"data": {"notes": "x" * (FIX_INPUT_CHARS * 2)}}
    request = RunRequest(input=big, configuration=CONFIG)
    run = await failing.for_turn(session, ANA).run(
        yaml=DOC_V2, version=2, request=request, turn_id="t"
    )
    words = await failing.last_failed_run(session)
    assert words is not None
    assert f"Test run {run.run_id} of version 2 failed at step 'Check coverage' (key check)" in (
        words
    )
    assert "Error: 401 with password ***" in words
    assert '"notes": "xxx' in words and "more characters" in words
    assert len(words) < FIX_INPUT_CHARS + 1000 and PASSWORD not in words
    assert await failing.last_failed_run(other) is None  # another session's run is not its

    await passing.for_turn(session, ANA).run(
        yaml=DOC_V2, version=2, request=RunRequest(), turn_id="t2"
    )
    assert await failing.last_failed_run(session) is None  # the newest run succeeded
