"""A 40-turn session on a 200-job workflow: does the prompt cache hold over a long session?

Runs 40 turns of one session through the turn graph with ``AnthropicModel`` (the
real ``anthropic`` SDK) pointed at the strict fake Messages API (``tests/fakes``),
which accounts prompt caching like the real API (a prefix matches only when every
block up to a breakpoint is the same, 20-block lookback, the model's minimum) and
counts tokens with a real BPE tokenizer (``tokenizer`` in the output). Each turn
carries the session's history as the service does (the user's words and the final
answers of the turns before it), so the history passes the budget
(``PLANWRIGHT_HISTORY_TOKEN_BUDGET``, 8,000) and is trimmed during the session. The
turns alternate: a question (one call), an edit (a rename, then the answer: two
calls), and every fifth turn an edit of three rounds.

Prints one JSON object:

  tokenizer: what counted the tokens.
  turns: per turn, ``input_tokens`` (every input token of its calls, cache reads and
      writes included), ``cache_read_share`` (the part read from the cache),
      ``cost_usd`` (input and output at the planner model's list prices),
      ``history_start`` (index of the first earlier message sent: it moves when the
      history is trimmed).
  trimming_starts_at: the first turn whose history was trimmed (1-based).
  share_at_least_0_7_from_turn_3: the part of turns 3..40 whose cache-read share is
      at least 0.7. Target: >= 0.9.
  median_cost_usd, max_cost_ratio_after_trimming: the median turn cost (turns 3..40)
      and the highest cost of a turn after trimming started, divided by that median.
      Target: <= 1.3. A three-round edit costs more than a question whatever the cache
      does, so max_cost_ratio_to_same_kind_after_trimming divides each turn's cost by
      the median of the turns of its own kind (turns 3..40) instead: what trimming
      itself adds.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.memory import InMemorySaver

from agents.budget import history_start
from agents.graph import build_graph
from agents.models import AnthropicModel, ModelRequest, ModelResponse
from agents.models.base import Usage
from agents.models.factory import DEFAULT_MODEL_IDS
from agents.runner import TurnRunner
from agents.runtime import AgentConfig, TurnRuntime
from agents.state import TurnInput
from agents.tokens import local_token_counter
from agents.usage import DEFAULT_PRICES, call_cost
from bench.edit_latency import build_document
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply, text_reply, tool_reply
from tests.fakes.cache import TOKENIZER

TURNS = 40
JOBS = 200
SENTENCES = (
    "The step posts the referral to the clinic's system and keeps the response for later steps.",
    "Coverage is checked before anything is sent, so a member without a plan stops early.",
    "Each failure goes to the error branch, which writes a note and notifies the team.",
    "The schedule runs every morning and only picks up referrals that arrived since the last run.",
    "Names are shown to the clinic staff, so they stay short and say what the step does.",
    "The payload is the same shape at each step, with the member id kept from the first fetch.",
)


class CountingModel:
    """Wraps a model and keeps each call's usage and model id."""

    name = "counting"

    def __init__(self, inner: AnthropicModel) -> None:
        self.inner = inner
        self.calls: list[tuple[str, Usage]] = []

    async def create(self, request: ModelRequest, *, on_text: Any = None) -> ModelResponse:
        response = await self.inner.create(request, on_text=on_text)
        self.calls.append((response.model, response.usage))
        return response


def _answer(turn: int) -> str:
    """A reply of ~300 tokens that differs from turn to turn."""
    picked = [SENTENCES[(turn + k) % len(SENTENCES)] for k in range(16)]
    return f"About turn {turn}: " + " ".join(picked)


def _question(turn: int) -> str:
    return (
        f"Question {turn}: what does step {(turn * 13) % JOBS} do with the referral, "
        "and what happens when the clinic's system does not answer?"
    )


def _kind(turn: int) -> str:
    return ("question", "code question", "edit", "three-round edit")[(turn - 1) % 4]


def _script(turn: int) -> tuple[str, list[Reply]]:
    """The user's message of ``turn`` and the model's replies to it."""
    step = f"step-{(turn * 13) % JOBS}"
    if turn % 4 == 1:
        return _question(turn), [text_reply(_answer(turn))]
    if turn % 4 == 2:
        inspect = tool_reply(("inspect_job_code", {"job_keys": [step]}))
        return _question(turn), [inspect, text_reply(_answer(turn))]
    rounds = 3 if turn % 4 == 0 else 1
    renames = [
        tool_reply(
            (
                "update_jobs",
                {"jobs": [{"key": f"step-{(turn * 7 + r * 31) % JOBS}", "name": f"T{turn}R{r}"}]},
            )
        )
        for r in range(rounds)
    ]
    message = f"Edit {turn}: rename the steps we talked about so the clinic staff can read them."
    return message, [*renames, text_reply(_answer(turn))]


def _total(usage: Usage) -> int:
    return usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens


async def _session(server: FakeAnthropicServer) -> dict[str, Any]:
    claude = AnthropicModel(
        models=DEFAULT_MODEL_IDS, api_key="bench-key", base_url=server.base_url, max_retries=0
    )
    model = CountingModel(claude)
    config = AgentConfig(max_tool_calls=50)
    graph = build_graph(InMemorySaver())
    counter = local_token_counter()
    yaml, version = build_document(JOBS).to_yaml(), 1
    history: list[dict[str, str]] = []
    turns: list[dict[str, Any]] = []
    try:
        for turn in range(1, TURNS + 1):
            text, replies = _script(turn)
            server.queue(*replies)
            before = len(model.calls)
            runtime = TurnRuntime(
                models={"router": model, "planner": model, "job_code": model},
                clock=partial(datetime.now, UTC),
                config=config,
            )
            payload: TurnInput = {
                "turn_id": f"session-{turn}",
                "user_text": text,
                "yaml": yaml,
                "version": version,
                "history": history,
            }
            runner = TurnRunner(graph)
            async for _ in runner.start(payload, runtime):
                pass
            state = await runner.state(payload["turn_id"])
            yaml, version = state["yaml"], state["version"]
            counts = [counter.count_now(m["content"]) for m in history]
            start = history_start(counts, [m["role"] for m in history], config.history_token_budget)
            history = list(state["history"])
            calls = model.calls[before:]
            if len(calls) != len(replies):
                raise RuntimeError(f"turn {turn}: expected {len(replies)} calls, saw {len(calls)}")
            total = sum(_total(u) for _, u in calls)
            read = sum(u.cache_read_input_tokens for _, u in calls)
            cost = sum(call_cost(m, u, DEFAULT_PRICES) or 0.0 for m, u in calls)
            turns.append(
                {
                    "turn": turn,
                    "kind": _kind(turn),
                    "calls": len(calls),
                    "input_tokens": total,
                    "cache_read_share": round(read / total, 3),
                    "cost_usd": round(cost, 5),
                    "history_start": start,
                }
            )
    finally:
        await claude.aclose()
    return _summary(turns)


def _summary(turns: list[dict[str, Any]]) -> dict[str, Any]:
    later = turns[2:]
    good = sum(t["cache_read_share"] >= 0.7 for t in later)
    trimmed = next((t["turn"] for t in turns if t["history_start"] > 0), None)
    median = statistics.median(t["cost_usd"] for t in later)
    after = [t for t in turns if trimmed is not None and t["turn"] >= trimmed]
    by_kind = {
        kind: statistics.median(t["cost_usd"] for t in later if t["kind"] == kind)
        for kind in {t["kind"] for t in later}
    }
    return {
        "tokenizer": TOKENIZER,
        "jobs": JOBS,
        "turns": turns,
        "trimming_starts_at": trimmed,
        "share_at_least_0_7_from_turn_3": round(good / len(later), 3),
        "median_cost_usd": round(median, 5),
        "max_cost_ratio_after_trimming": (
            round(max(t["cost_usd"] for t in after) / median, 3) if after else None
        ),
        "max_cost_ratio_to_same_kind_after_trimming": (
            round(max(t["cost_usd"] / by_kind[t["kind"]] for t in after), 3) if after else None
        ),
    }


async def main() -> None:
    with FakeAnthropicServer() as server:
        print(json.dumps(await _session(server)))


if __name__ == "__main__":
    asyncio.run(main())
