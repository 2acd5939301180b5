"""What a step's code may not do once it escapes the runtime's ``vm`` into node's own
realm (``s.constructor.constructor('return process')()``): read or write files outside
the runtime, start a process, see the service's environment. Node's permission model
refuses it (``agents/testrun/process.py``), through the real node subprocess; a node that
cannot confine a run is refused before any run starts."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import stat
from pathlib import Path

import pytest

from agents.testrun import LocalRunner, OpenFnRuntimeUnavailable, RunDetail, RunLimits
from agents.testrun.process import (
    CHILD_ENV,
    PERMISSION_FLAGS,
    SandboxUnavailable,
    permission_flag,
    read_grants,
    sandbox_flags,
)
from tests.agents.testrun.workflow import Job, workflow
from tools.testrun import RunRequest

ESCAPE = "const P = s.constructor.constructor('return process')();"
DENIED = "ERR_ACCESS_DENIED"


def _escaping(body: str) -> str:
    """A step whose code runs ``body`` with ``P`` the node process's real ``process``."""
    return f"fn(s => {{ {ESCAPE} {body} return s; }});"


async def _run_one(runner: LocalRunner, body: str) -> RunDetail:
    doc = workflow([Job("escape", _escaping(body))])
    return await runner.execute(doc, RunRequest(), run_id="x")


def _everything(detail: RunDetail) -> str:
    """The run as the service stores and answers it, and node's every event."""
    return detail.run.model_dump_json() + json.dumps(detail.events)


def _refused(detail: RunDetail) -> str:
    run = detail.run
    assert run.status == "failed", run.model_dump_json()
    (step,) = run.steps
    assert step.status == "failed"
    assert step.error is not None and DENIED in step.error, step.error
    return step.error


async def test_a_file_outside_the_runtime_is_not_read(runner: LocalRunner, tmp_path: Path) -> None:
    marker = f"marker-{secrets.token_hex(8)}"
    secret = tmp_path / "service.db"
    secret.write_text(f"rows... {marker} ...", encoding="utf-8")

    detail = await _run_one(
        runner,
        f"s.data.read = P.getBuiltinModule('fs').readFileSync({json.dumps(str(secret))}, 'utf8');",
    )

    error = _refused(detail)
    assert "a test run may read only OpenFn's runtime and adaptors" in error
    assert marker not in _everything(detail)


@pytest.mark.parametrize("where", ["outside", "runtime"])
async def test_no_file_is_written_outside_nor_in_the_runtime(
    runner: LocalRunner, runtime_dir: Path, tmp_path: Path, where: str
) -> None:
    """Neither anywhere the service can write nor over the shared runtime's own code
    (which every later run would load)."""
    target = tmp_path / "pwned.txt" if where == "outside" else runtime_dir / "node_modules" / "p.js"
    try:
        detail = await _run_one(
            runner,
            f"P.getBuiltinModule('fs').writeFileSync({json.dumps(str(target))}, 'written');",
        )
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)
    _refused(detail)


async def test_no_process_is_started(runner: LocalRunner, tmp_path: Path) -> None:
    """Through ``ChildProcess`` itself: the path ``guard.mjs``'s patches of
    ``child_process``'s functions do not cover."""
    touch = shutil.which("touch")
    assert touch is not None
    made = tmp_path / "spawned"
    args = json.dumps([touch, str(made)])
    detail = await _run_one(
        runner,
        "const { ChildProcess } = P.getBuiltinModule('child_process');"
        f" const child = new ChildProcess(); child.spawn({{ file: {json.dumps(touch)},"
        f" args: {args}, stdio: 'ignore' }}); s.data.pid = child.pid;",
    )

    _refused(detail)
    assert not made.exists()
    assert "pid" not in json.dumps(detail.run.steps[0].output)


async def test_the_services_environment_is_not_in_node(
    runner: LocalRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = f"marker-{secrets.token_hex(8)}"
    monkeypatch.setenv("PLANWRIGHT_TEST_SECRET", marker)
    monkeypatch.setenv("DATABASE_URL", f"postgresql://u:{marker}@db/planwright")

    detail = await _run_one(runner, "s.data.env = Object.assign({}, P.env);")

    assert detail.run.status == "succeeded"
    (step,) = detail.run.steps
    assert step.output["data"]["env"] == CHILD_ENV == {"LANG": "C.UTF-8"}
    assert marker not in _everything(detail)


@pytest.mark.parametrize("isolate", [True, False], ids=["namespace", "no_namespace"])
async def test_the_services_environment_is_not_read_from_proc(
    runtime_dir: Path, monkeypatch: pytest.MonkeyPatch, isolate: bool
) -> None:
    """``/proc/<ppid>/environ`` is the service's environment as it started (node's parent:
    ``unshare`` execs node); ``/proc/self/environ`` is node's own. In a user namespace the
    kernel refuses the parent's (EACCES); where none can be made (a container's default
    seccomp profile), only node's permission model does."""
    runner = LocalRunner(RunLimits(timeout_s=20), runtime_dir, isolate_network=isolate)
    marker = f"marker-{secrets.token_hex(8)}"
    monkeypatch.setenv("PLANWRIGHT_TEST_SECRET", marker)
    service_env = [
        entry
        for entry in Path(f"/proc/{os.getpid()}/environ").read_bytes().split(b"\0")
        if len(entry) >= 12
    ]
    assert service_env  # the check below can fail

    for proc in ("'/proc/' + P.ppid", "'/proc/self'"):
        detail = await _run_one(
            runner,
            f"s.data.environ = P.getBuiltinModule('fs').readFileSync({proc} + '/environ', 'utf8');",
        )
        _refused(detail)
        text = _everything(detail)
        assert marker not in text
        for entry in service_env:
            assert entry.decode("utf-8", "replace") not in text


async def test_what_node_is_allowed_is_the_runtime_alone(
    runner: LocalRunner, runtime_dir: Path, tmp_path: Path
) -> None:
    """``process.permission`` inside a run: the installed packages and the runner's own
    files readable; the runtime folder itself, its parent, this repository and the
    test's folder not; nothing writable; no child process, no worker thread."""
    root = runtime_dir.resolve()
    readable = [root / "node_modules" / "@openfn" / "runtime" / "package.json", root / "run.mjs"]
    unreadable = [root, root / ".planwright-installed", root.parent, Path.cwd(), tmp_path]
    checks = {
        "read": [str(p) for p in readable],
        "unread": [str(p) for p in unreadable],
        "write": [str(root / "node_modules"), str(tmp_path)],
    }
    detail = await _run_one(
        runner,
        f"const c = {json.dumps(checks)}; const has = P.permission.has;"
        " s.data = { read: c.read.map(p => has('fs.read', p)),"
        " unread: c.unread.map(p => has('fs.read', p)),"
        " write: c.write.map(p => has('fs.write', p)), anyWrite: has('fs.write'),"
        " child: has('child'), worker: has('worker') };",
    )

    assert detail.run.status == "succeeded", detail.run.model_dump_json()
    assert detail.run.steps[0].output["data"] == {
        "read": [True, True],
        "unread": [False] * len(unreadable),
        "write": [False, False],
        "anyWrite": False,
        "child": False,
        "worker": False,
    }
    assert set(read_grants(root)) >= {root / "node_modules", root / "run.mjs"}


def _fake_node(folder: Path, body: str) -> Path:
    """An executable ``node`` in ``folder`` (put first on ``PATH``) that logs its
    arguments to ``folder/calls`` and then runs ``body``."""
    folder.mkdir()
    node = folder / "node"
    node.write_text(f'#!/bin/sh\necho "$*" >> "{folder}/calls"\n{body}\n', encoding="utf-8")
    node.chmod(node.stat().st_mode | stat.S_IXUSR)
    return node


@pytest.mark.parametrize("kind", ["no_permission_model", "flags_ignored"])
async def test_a_node_that_cannot_confine_a_run_is_refused_before_it_runs(
    runtime_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Node 18 (no permission model: both flags are bad options), and a node that takes
    the flags and confines nothing (a wrapper dropping them): no run starts, the run
    answers ``openfn_runtime_unavailable`` (503 in the service)."""
    real = shutil.which("node")
    assert real is not None
    if kind == "no_permission_model":
        body = (
            'for a; do case "$a" in --permission|--experimental-permission)'
            ' echo "node: bad option: $a" >&2; exit 9;; esac; done\n'
            f'exec {real} "$@"'
        )
    else:
        body = (
            'for a; do shift; case "$a" in --permission|--experimental-permission|'
            '--allow-fs-*) ;; *) set -- "$@" "$a";; esac; done\n'
            f'exec {real} "$@"'
        )
    fake = _fake_node(tmp_path / "bin", body)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    runner = LocalRunner(RunLimits(timeout_s=20), runtime_dir)

    with pytest.raises(OpenFnRuntimeUnavailable) as refused:
        await runner.run(workflow([Job("a", "fn(s => s);")]), RunRequest(), run_id="r")

    assert isinstance(refused.value, SandboxUnavailable)
    assert refused.value.code == "openfn_runtime_unavailable"
    assert "no working permission model" in refused.value.message
    calls = (fake.parent / "calls").read_text(encoding="utf-8").splitlines()
    assert calls and all("run.mjs" not in call for call in calls)  # only the checks ran


def test_a_grant_node_could_read_as_more_than_one_path_is_refused() -> None:
    assert sandbox_flags("--experimental-permission", [Path("/srv/rt/node_modules")]) == [
        "--experimental-permission",
        "--allow-fs-read=/srv/rt/node_modules",
    ]
    for odd in ("/srv/a,/etc/node_modules", "/srv/*/node_modules"):
        with pytest.raises(SandboxUnavailable):
            sandbox_flags("--experimental-permission", [Path(odd)])


async def test_a_node_that_cannot_be_checked_is_refused_and_checked_again_next_time(
    tmp_path: Path,
) -> None:
    """A node that does not start (here: its interpreter is missing) cannot be shown to
    confine: refused, and not remembered, so a run after the machine recovers checks anew."""
    node = tmp_path / "node"
    node.write_text("#!/nonexistent/interpreter\n", encoding="utf-8")
    node.chmod(node.stat().st_mode | stat.S_IXUSR)

    for _ in range(2):
        with pytest.raises(SandboxUnavailable, match="could not check"):
            await permission_flag(str(node))
    node.write_text(f'#!/bin/sh\nexec {shutil.which("node")} "$@"\n', encoding="utf-8")
    assert await permission_flag(str(node)) in PERMISSION_FLAGS
