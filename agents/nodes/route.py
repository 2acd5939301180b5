"""The router: planner, or straight to the code agent for one step's code.

It answers through a forced ``route`` tool call. The job-code route is only
possible from a step's page in an editing session, so elsewhere no model is
asked at all; failures, malformed answers and low confidence go to the planner.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from langgraph.runtime import Runtime
from pydantic import BaseModel, Field, ValidationError

from agents.budget import check_message
from agents.events import RouteEvent
from agents.models.base import ModelError, ModelRequest, RequestContext
from agents.runtime import TurnRuntime
from agents.state import TurnState
from tools.base import ToolSpec
from tools.document.redaction import redact

logger = logging.getLogger(__name__)


class RouteArgs(BaseModel):
    """Send the user's message to the agent that should handle it."""

    destination: Literal["planner", "job_code"] = Field(
        description="'job_code' only for a request about the code of the one step the user "
        "is viewing; 'planner' for everything else."
    )
    job_key: str | None = Field(None, description="The step's key, for job_code.")
    confidence: int = Field(ge=1, le=5, description="1 = a guess, 5 = certain.")


ROUTE: ToolSpec[RouteArgs] = ToolSpec("route", RouteArgs, "route", action="choose an agent")
"""The router's forced tool: a spec like the planner's, its schema generated the same way."""


def page_context(state: TurnState) -> str:
    if state.get("page") == "job" and state.get("job_key"):
        return f"The user is viewing step {state['job_key']!r}."
    return "The user is on the workflow page."


async def route_node(state: TurnState, runtime: Runtime[TurnRuntime]) -> dict[str, Any]:
    rt = runtime.context
    await check_message(state["user_text"], rt.config.max_message_tokens, rt.tokens)
    destination = await _decide(state, runtime.context)
    runtime.stream_writer(RouteEvent(destination=destination))
    return {"route": destination}


async def _decide(state: TurnState, rt: TurnRuntime) -> Literal["planner", "job_code"]:
    job_key = state.get("job_key")
    if state.get("read_only") or state.get("page") != "job" or not job_key:
        return "planner"
    doc = rt.document(state["yaml"], state["version"])
    if job_key not in doc.structure.jobs:
        return "planner"
    prompt = rt.prompt("router")
    request = ModelRequest(
        role="router",
        system=prompt.render(page_context=page_context(state)),
        messages=[{"role": "user", "content": state["user_text"]}],
        tools=[ROUTE.definition()],
        tool_choice={"type": "tool", "name": ROUTE.name},
        max_tokens=256,
        context=RequestContext(
            user_text=state["user_text"],
            structure=redact(doc.structure),
            page="job",
            job_key=job_key,
            read_only=False,
            now=rt.clock(),
        ),
        prompt_name=prompt.name,
        prompt_version=prompt.version,
        prompt_hash=prompt.hash,
    )
    try:
        response = await rt.model("router").create(request)
        use = next((u for u in response.tool_uses if u.get("name") == ROUTE.name), None)
        if use is not None and response.stop_reason == "max_tokens":
            logger.warning("router's route call was cut off; using the planner")
            return "planner"
        if use is None:
            logger.warning("router answered without a route call; using the planner")
            return "planner"
        answer = RouteArgs.model_validate(use.get("input"))
    except ModelError as exc:
        logger.warning("router model failed (%s); using the planner", exc.code)
        return "planner"
    except ValidationError as exc:
        logger.warning("router sent an invalid route call (%s); using the planner", exc)
        return "planner"
    except Exception:
        # Routing is an optimisation: whatever goes wrong here, the planner can answer.
        logger.warning("router failed; using the planner", exc_info=True)
        return "planner"
    if (
        answer.destination == "job_code"
        and answer.confidence >= rt.config.router_min_confidence
        and answer.job_key in (None, job_key)
    ):
        return "job_code"
    return "planner"
