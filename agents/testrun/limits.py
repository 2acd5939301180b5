"""The limits every test run gets (DESIGN §5c); the service fills them from its settings."""

from __future__ import annotations

from dataclasses import dataclass, replace

DEFAULT_TIMEOUT_S = 30.0
"""Wall-clock limit of one run, node start included."""
MAX_TIMEOUT_S = 120.0
"""The most a run may take whatever its request asks (the service refuses a
``timeout_s`` over its own maximum, at most this, with ``timeout_too_long``)."""
DEFAULT_MEMORY_MB = 256
"""V8's old-space heap (``--max-old-space-size``); the process's data segment gets this
plus :data:`NATIVE_HEADROOM_MB` (``RLIMIT_DATA``) for buffers outside the heap."""
NATIVE_HEADROOM_MB = 512
DEFAULT_STEP_BYTES = 64 * 1024
"""Each step's input, output and logs (their JSON text) are cut to this; ``truncated`` says so."""
DEFAULT_TOTAL_BYTES = 4 * 1024 * 1024
"""All of one run's output (events node writes); past it the run is stopped and failed."""
DEFAULT_STATE_MB = 10
"""The runtime's own state limit per step (``stateLimitMb``)."""


@dataclass(frozen=True)
class RunLimits:
    """Time, memory and output limits of one test run."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    """Wall-clock limit; past it the whole process group is killed (``timed_out``)."""
    memory_mb: int = DEFAULT_MEMORY_MB
    """V8 heap limit in MiB; a run past it fails with an out-of-memory error."""
    step_bytes: int = DEFAULT_STEP_BYTES
    """Byte limit of each step's input, output and logs (and of the final state)."""
    total_bytes: int = DEFAULT_TOTAL_BYTES
    """Byte limit of everything a run reports; past it the run is stopped."""
    state_mb: int = DEFAULT_STATE_MB
    """The runtime's per-step state size limit (it fails a step whose state is bigger)."""

    def for_request(self, timeout_s: float | None) -> RunLimits:
        """These limits with a request's own ``timeout_s`` (never above :data:`MAX_TIMEOUT_S`)."""
        if timeout_s is None:
            return self
        return replace(self, timeout_s=min(float(timeout_s), MAX_TIMEOUT_S))
