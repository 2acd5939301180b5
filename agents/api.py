"""The public surface of ``agents``: everything the service (``app``) uses, from one module.

``app`` imports from here only (``tests/test_layout_agents_api.py`` holds it to that); the
modules behind it may move without ``app`` changing. The names load lazily, on first
use, so importing this module costs nothing and a caller pays only for what it takes
(``from agents.api import mask_text`` loads :mod:`agents.masking`, not the graphs)::

    engine = TurnEngine.for_workflows(checkpointer, tracer)   # or .for_plans(...)
    run = engine.start(turn_input, TurnRuntime(...), session_id=..., user_id=...)
    async for event in run.events: ...                        # agents.events models
    run = engine.resume(turn_id, state, runtime, approved=True, earlier=calls)

Grouped by what they are for:

- turns: :class:`TurnEngine` (start, resume, pending, forget), :class:`TurnRun`,
  :class:`TurnRunner`, the runtimes a run gets (:class:`TurnRuntime`, :class:`PlanRuntime`,
  :class:`OpenWorkflow`), their configuration (:class:`AgentConfig`), the graphs' inputs
  (:class:`TurnInput`, :class:`PlanInput`), a commit (:class:`Commit`), the message
  budget (:func:`check_message`), a review's replay (:func:`replay`);
- events and usage (:mod:`agents.events`, :mod:`agents.usage`);
- models: roles, clients, configuration and catalogue (:mod:`agents.models`), token
  counting (:mod:`agents.tokens`);
- tracing (:mod:`agents.tracing`) and masking (:mod:`agents.masking`);
- test runs in OpenFn's runtime (:mod:`agents.testrun`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what mypy and editors see; at run time __getattr__ loads them
    from agents.budget import MessageTooLongError, check_message
    from agents.engine import TurnEngine, TurnRun, plan_build_graph
    from agents.events import (
        ConfirmEvent,
        DeltaEvent,
        Event,
        MessageEvent,
        ModelCallUsage,
        PlanProgressEvent,
        PlanProposedEvent,
        ProposalChange,
        ProposalEvent,
        RouteEvent,
        RunCompletedEvent,
        RunProgressEvent,
        StatusEvent,
        TurnCompletedEvent,
        TurnUsage,
        WorkflowEvent,
        workflow_event,
    )
    from agents.masking import is_secret_name, mask_text
    from agents.models.base import ChatModel, ModelRole
    from agents.models.catalog import DEFAULT_MODEL_IDS, Provider, model_id_problem
    from agents.models.factory import ModelConfig, build_models, token_counter
    from agents.plan.runtime import OpenWorkflow, PlanRuntime
    from agents.plan.state import PlanInput
    from agents.review import ReviewError, StaleProposalError, replay
    from agents.runner import TurnRunner
    from agents.runtime import AgentConfig, Commit, RecordsCalls, TurnRuntime, TurnTestRuns
    from agents.state import TurnInput
    from agents.testrun import (
        DEFAULT_CACHE_DIR,
        LocalRunner,
        ProgressCallback,
        RunLimits,
        TestRunner,
    )
    from agents.testrun.install import OpenFnRuntimeUnavailable, install_pinned
    from agents.testrun.secrets import MASK, MIN_SECRET_CHARS, PUBLIC_CONFIGURATION_KEYS
    from agents.tokens import TokenCounter, local_token_counter
    from agents.tracing import LangfuseConfig, Tracer
    from agents.usage import DEFAULT_PRICES, ModelPrice, PromptUse, UsageLedger

_MODULES: dict[str, tuple[str, ...]] = {
    "agents.budget": ("MessageTooLongError", "check_message"),
    "agents.engine": ("TurnEngine", "TurnRun", "plan_build_graph"),
    "agents.events": (
        "ConfirmEvent",
        "DeltaEvent",
        "Event",
        "MessageEvent",
        "ModelCallUsage",
        "PlanProgressEvent",
        "PlanProposedEvent",
        "ProposalChange",
        "ProposalEvent",
        "RouteEvent",
        "RunCompletedEvent",
        "RunProgressEvent",
        "StatusEvent",
        "TurnCompletedEvent",
        "TurnUsage",
        "WorkflowEvent",
        "workflow_event",
    ),
    "agents.masking": ("is_secret_name", "mask_text"),
    "agents.models.base": ("ChatModel", "ModelRole"),
    "agents.models.catalog": ("DEFAULT_MODEL_IDS", "Provider", "model_id_problem"),
    "agents.models.factory": ("ModelConfig", "build_models", "token_counter"),
    "agents.plan.runtime": ("OpenWorkflow", "PlanRuntime"),
    "agents.plan.state": ("PlanInput",),
    "agents.review": ("ReviewError", "StaleProposalError", "replay"),
    "agents.runner": ("TurnRunner",),
    "agents.runtime": ("AgentConfig", "Commit", "RecordsCalls", "TurnRuntime", "TurnTestRuns"),
    "agents.state": ("TurnInput",),
    "agents.testrun": (
        "DEFAULT_CACHE_DIR",
        "LocalRunner",
        "ProgressCallback",
        "RunLimits",
        "TestRunner",
    ),
    "agents.testrun.install": ("OpenFnRuntimeUnavailable", "install_pinned"),
    "agents.testrun.secrets": ("MASK", "MIN_SECRET_CHARS", "PUBLIC_CONFIGURATION_KEYS"),
    "agents.tokens": ("TokenCounter", "local_token_counter"),
    "agents.tracing": ("LangfuseConfig", "Tracer"),
    "agents.usage": ("DEFAULT_PRICES", "ModelPrice", "PromptUse", "UsageLedger"),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}

__all__ = sorted(_WHERE)


if not TYPE_CHECKING:  # hidden from mypy, so that a name not imported above is an error

    def __getattr__(name: str) -> Any:
        """Load ``name`` from the module that defines it, once (then a global here)."""
        module = _WHERE.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
