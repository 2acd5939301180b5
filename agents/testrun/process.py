"""One node process of a test run: started, bounded, read and ended (DESIGN §5c).

:func:`run_node` starts ``node/run.mjs`` with the run on stdin (the only place
credential values travel) and reads the JSON events it writes, one a line, on a pipe
of its own (``--events-fd``). It bounds the process three ways: wall clock (the whole
process group is killed, and what node wrote before is kept), memory
(``--max-old-space-size`` and ``RLIMIT_DATA``) and output (all events; node cuts each
value). The environment is :data:`CHILD_ENV`, nothing of the service's: its tokens, keys
and database addresses never reach it. Where the kernel allows an unprivileged network
namespace (``unshare -rn``) the process runs in one with no interfaces up, under
``run.mjs``'s own guard.

The job code runs in the runtime's ``vm`` context, which is no security boundary: a
step can reach this realm's ``process`` (``s.constructor.constructor('return
process')()``). So node runs under its permission model (:func:`permission_flag`:
``--experimental-permission`` in Node 20, ``--permission`` from 22.13/23.5), allowed to
read only the installed packages and the runner's own files (:func:`read_grants`) and
nothing else: no file written anywhere, no child process, no worker thread, no native
addon, no WASI, no inspector. A node without it is refused
(:class:`SandboxUnavailable`, ``openfn_runtime_unavailable``): never run unsandboxed.

What the events mean is :mod:`agents.testrun.report`'s; which run to start is
:class:`agents.testrun.local.LocalRunner`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import shutil
import signal
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agents.testrun.install import SCRIPTS, OpenFnRuntimeUnavailable
from agents.testrun.limits import NATIVE_HEADROOM_MB, RunLimits
from agents.testrun.report import Outcome

EventCallback = Callable[[dict[str, Any]], Awaitable[None]]

_STDERR_KEEP = 64 * 1024
_DRAIN_AFTER_KILL_S = 2.0

_UNSHARE: list[str] | None = None
_UNSHARE_CHECKED = False

CHILD_ENV: dict[str, str] = {"LANG": "C.UTF-8"}
"""node's whole environment: nothing of the service's (no ``PATH`` either: ``unshare``
and node are started by absolute path, and a run may start no process)."""

PERMISSION_FLAGS = ("--permission", "--experimental-permission")
"""The flag that turns node's permission model on: ``--permission`` from Node 22.13 and
23.5, ``--experimental-permission`` in Node 20 (the first node accepts is used)."""
_PERMISSION: dict[str, str | None] = {}
"""node binary -> its working permission flag (None: it has none that holds)."""
_PROBE_TIMEOUT_S = 15.0
_PROBE = """
const fs = require('fs');
const [a, b, outside] = %s;
const p = process.permission;
let denied = false;
try { fs.readFileSync(outside); } catch (e) { denied = e.code === 'ERR_ACCESS_DENIED'; }
const holds = !!p && p.has('fs.read', a) && p.has('fs.read', b + '/file')
  && !p.has('fs.read', outside) && !p.has('fs.write') && !p.has('child') && !p.has('worker')
  && denied;
process.stdout.write(holds ? 'sandboxed' : 'open');
"""


class SandboxUnavailable(OpenFnRuntimeUnavailable):
    """This node cannot confine a run (no permission model, or one that does not hold):
    test runs are refused, never run unsandboxed (503 ``openfn_runtime_unavailable``)."""


def read_grants(root: Path) -> list[Path]:
    """What a run's node may read in the runtime folder ``root``: the installed packages
    and the runner's own files (not the folder itself: nothing else there, nor beside it)."""
    return [root / "node_modules", root / "package.json", *(root / name for name in SCRIPTS)]


def sandbox_flags(flag: str, reads: list[Path]) -> list[str]:
    """node's permission flags: ``flag`` on, one ``--allow-fs-read`` per path (Node 20.20
    takes a comma as part of a path), nothing writable, no child process, no worker. A
    path with a comma or a ``*`` is refused: older Node 20 releases split a grant at
    commas and read ``*`` as a wildcard, either of which could grant more than meant."""
    for path in reads:
        if "," in str(path) or "*" in str(path):
            raise SandboxUnavailable(
                f"the runtime folder's path {str(path)!r} has a ',' or '*', which node's "
                "permission model may read as more than one path: install it elsewhere"
            )
    return [flag, *(f"--allow-fs-read={path}" for path in reads)]


async def _probe(node: str, flag: str) -> bool:
    """Whether ``node`` under ``flag`` confines as :func:`sandbox_flags` means: two granted
    paths readable (one a folder, so what is under it), a file beside them refused by a
    real read, nothing writable, no child process, no worker. ``OSError`` when it cannot
    be checked (no temporary folder, node does not start)."""
    with tempfile.TemporaryDirectory(prefix="planwright-sandbox-") as tmp:
        base = Path(tmp).resolve()
        granted_a, granted_b, outside = base / "a", base / "b", base / "outside"
        granted_a.write_text("a", encoding="utf-8")
        granted_b.mkdir()
        outside.write_text("outside", encoding="utf-8")
        script = _PROBE % json.dumps([str(granted_a), str(granted_b), str(outside)])
        probe = await asyncio.create_subprocess_exec(
            node,
            *sandbox_flags(flag, [granted_a, granted_b]),
            "--no-warnings",
            "-e",
            script,
            cwd=base,
            env=CHILD_ENV,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            out, _ = await asyncio.wait_for(probe.communicate(), _PROBE_TIMEOUT_S)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                probe.kill()
            await probe.wait()
            raise
        return probe.returncode == 0 and out == b"sandboxed"


async def permission_flag(node: str) -> str:
    """The flag that confines ``node`` (of :data:`PERMISSION_FLAGS`), checked once per
    binary by running it; :class:`SandboxUnavailable` when none does."""
    if node not in _PERMISSION:
        found: str | None = None
        try:
            for flag in PERMISSION_FLAGS:
                if await _probe(node, flag):
                    found = flag
                    break
        except TimeoutError as exc:  # not remembered: a loaded machine may answer next time
            raise SandboxUnavailable(
                f"checking {node}'s permission model took over {_PROBE_TIMEOUT_S:g}s"
            ) from exc
        except OSError as exc:  # no temporary folder, node would not start: nor this
            raise SandboxUnavailable(f"could not check {node}'s permission model: {exc}") from exc
        _PERMISSION[node] = found
    confining = _PERMISSION[node]
    if confining is None:
        raise SandboxUnavailable(
            f"{node} has no working permission model (--permission or "
            "--experimental-permission): test runs need Node.js >= 20 to confine the job "
            "code, and are refused rather than run unconfined"
        )
    return confining


async def _network_namespace() -> list[str]:
    """``["unshare", "-rn", "--"]`` when an unprivileged network namespace can be made here."""
    global _UNSHARE, _UNSHARE_CHECKED
    if not _UNSHARE_CHECKED:
        found = shutil.which("unshare")
        if found is not None:
            try:
                probe = await asyncio.create_subprocess_exec(
                    found,
                    "-rn",
                    "--",
                    "true",
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                )
                if await asyncio.wait_for(probe.wait(), 5) == 0:
                    _UNSHARE = [found, "-rn", "--"]
            except (OSError, TimeoutError):
                _UNSHARE = None
        _UNSHARE_CHECKED = True
    return list(_UNSHARE or [])


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _read_stderr(proc: asyncio.subprocess.Process) -> str:
    """The first :data:`_STDERR_KEEP` bytes of node's stderr; the rest is read and dropped."""
    assert proc.stderr is not None
    kept = bytearray()
    while chunk := await proc.stderr.read(65536):
        if len(kept) < _STDERR_KEEP:
            kept += chunk[: _STDERR_KEEP - len(kept)]
    return kept.decode("utf-8", "replace")


async def run_node(
    root: Path,
    payload: dict[str, Any],
    limits: RunLimits,
    *,
    isolate: bool,
    on_event: EventCallback,
) -> tuple[list[dict[str, Any]], Outcome]:
    """Run ``run.mjs`` in ``root`` on ``payload`` within ``limits`` (in a network
    namespace of its own when ``isolate`` and the kernel allows it), awaiting
    ``on_event`` for each event as it comes; node's events and what happened to it."""
    node = shutil.which("node")
    if node is None:
        raise OpenFnRuntimeUnavailable("`node` is not on PATH: test runs need Node.js >= 20")
    flag = await permission_flag(node)  # before anything starts: never run unconfined
    root = root.resolve()
    prefix = await _network_namespace() if isolate else []
    read_fd, write_fd = os.pipe()
    command = [
        *prefix,
        node,
        *sandbox_flags(flag, read_grants(root)),
        "--experimental-vm-modules",
        "--no-warnings",
        f"--max-old-space-size={limits.memory_mb}",
        "run.mjs",
        "--events-fd",
        str(write_fd),
    ]
    outcome = Outcome(
        timeout_s=limits.timeout_s,
        total_bytes=limits.total_bytes,
        memory_mb=limits.memory_mb,
    )
    try:
        proc = await asyncio.create_subprocess_exec(
            *command,
            cwd=root,
            env=CHILD_ENV,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            pass_fds=(write_fd,),
            start_new_session=True,  # its own process group: one kill ends all of it
        )
    except OSError as exc:
        os.close(read_fd)
        raise OpenFnRuntimeUnavailable(f"could not start node: {exc}") from exc
    finally:
        os.close(write_fd)
    data_limit = (limits.memory_mb + NATIVE_HEADROOM_MB) * 1024 * 1024
    with contextlib.suppress(OSError, ValueError):
        resource.prlimit(proc.pid, resource.RLIMIT_DATA, (data_limit, data_limit))

    events: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limits.total_bytes + 1)
    pipe = os.fdopen(read_fd, "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    stderr_task = asyncio.create_task(_read_stderr(proc))
    seen = 0

    async def pump() -> None:
        nonlocal seen
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(payload).encode())
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await proc.stdin.drain()
        proc.stdin.close()
        while True:
            try:
                line = await reader.readline()
            except (ValueError, asyncio.LimitOverrunError):
                outcome.killed_for = "output"
                return
            if not line:
                return
            seen += len(line)
            if seen > limits.total_bytes:
                outcome.killed_for = "output"
                return
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            events.append(event)
            await on_event(event)

    async def drain() -> None:
        nonlocal seen
        while seen <= limits.total_bytes:
            try:
                line = await reader.readline()
            except (ValueError, asyncio.LimitOverrunError):
                return
            if not line:
                return
            seen += len(line)
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                if isinstance(event, dict) and event.get("ev") != "done":
                    events.append(event)

    try:
        try:
            await asyncio.wait_for(pump(), timeout=limits.timeout_s)
        except TimeoutError:
            outcome.killed_for = "timeout"
        if outcome.killed_for is not None:
            _kill_group(proc.pid)
        if outcome.killed_for == "timeout":  # keep what node wrote before it was killed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(drain(), _DRAIN_AFTER_KILL_S)
        await proc.wait()
    finally:
        if proc.returncode is None:  # cancelled: never leave node running
            _kill_group(proc.pid)
            with contextlib.suppress(ProcessLookupError):
                await proc.wait()
        transport.close()
    outcome.exit_code = proc.returncode
    with contextlib.suppress(TimeoutError):
        outcome.stderr = await asyncio.wait_for(stderr_task, _DRAIN_AFTER_KILL_S)
    return events, outcome
