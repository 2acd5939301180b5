"""``OfflineModel``: the model protocol with no weights and no network.

It reads only the request (messages + structured context), never earlier
calls, so the same request always gets the same response:

- router: a forced ``route`` call -- ``job_code`` only for a code request about
  exactly the step whose page the user is on, otherwise ``planner``;
- planner: first call -> tool calls (or a plain answer); a call that ends with
  tool results -> a final answer written from those results. On a plan turn
  (``context.project`` set and ``propose_plan`` offered) the text is a spec or
  feedback on a proposed plan (:mod:`.spec_turn`): one ``propose_plan`` call or a
  refusal;
- job_code: an ``edit_job_code`` rewrite with starter code; after an error
  result, a minimal valid body; after success, a short note.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from agents.models.base import ModelRequest, ModelResponse, TextSink, Usage
from agents.offline.code_requests import REWRITE, code_request
from agents.offline.codegen import minimal_code, starter_code
from agents.offline.grammar import clean, name_notes, strip_polite
from agents.offline.plan import Plan, Reply
from agents.offline.planner import plan
from agents.offline.references import NeedsAnswer, Resolver
from agents.offline.spec import Refusal
from agents.offline.spec_turn import PROPOSE_PLAN, intro, plan_turn_noted, proposed_text
from agents.offline.summary import final_text
from agents.offline.view import View
from tools.catalogue.adaptors import load_catalogue
from tools.catalogue.names import split_adaptor
from tools.jobcode import check_job_code, format_problems, has_code, top_level_operations

ToolRound = list[tuple[str, dict[str, Any], str, bool]]


class OfflineModel:
    """Deterministic, rule-based stand-in for Claude (see agents/offline/README.md)."""

    name = "offline"

    async def create(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        if request.role == "router":
            response = self._route(request)
        elif request.role == "job_code":
            response = self._job_code(request)
        else:
            response = self._planner(request)
        if on_text is not None and response.text and response.stop_reason == "end_turn":
            await on_text(response.text)
        return response

    # --- router ---

    def _route(self, request: ModelRequest) -> ModelResponse:
        ctx = request.context
        destination, job_key = "planner", None
        if ctx.page == "job" and ctx.job_key and not ctx.read_only:
            structure = ctx.structure
            if not structure.get("jobs"):
                # The router may be given no structure: then the viewed step is all we know.
                job = {"key": ctx.job_key, "name": ctx.job_key, "adaptor": "common"}
                structure = {"name": None, "jobs": [job], "triggers": [], "edges": []}
            view = View(structure)
            text = strip_polite(clean(ctx.user_text))
            try:
                outcome = code_request(" ".join(text.split()), view, Resolver(view, ctx.job_key))
            except NeedsAnswer:
                outcome = None
            if (
                isinstance(outcome, Plan)
                and len(outcome.calls) == 1
                and outcome.calls[0].input.get("job_key") == ctx.job_key
            ):
                destination, job_key = "job_code", ctx.job_key
        route: dict[str, Any] = {"destination": destination, "confidence": 5}
        if job_key:
            route["job_key"] = job_key
            route["confidence"] = 4
        return _tool_response(request, [("route", route)])

    # --- planner ---

    def _planner(self, request: ModelRequest) -> ModelResponse:
        rounds = _tool_rounds(request.messages)
        proposals = [c for c in rounds[-1] if c[0] == PROPOSE_PLAN] if rounds else []
        if proposals:
            _, args, result, is_error = proposals[-1]
            text = proposed_text(args, result, is_error)
            return _text_response(request, _with_name_notes(text, request.messages, rounds))
        if rounds:
            text = final_text(rounds, View(request.context.structure), request.context.now)
            return _text_response(request, _with_name_notes(text, request.messages, rounds))
        available = {tool.get("name") for tool in request.tools}
        if request.context.project is not None and PROPOSE_PLAN in available:
            proposal, notes = plan_turn_noted(request.context)
            if isinstance(proposal, Refusal):
                return _text_response(request, proposal.text)
            call = (PROPOSE_PLAN, proposal.model_dump(mode="json"))
            return _tool_response(request, [call], intro(proposal, notes))
        outcome = plan(request.context)
        if isinstance(outcome, Reply):
            return _text_response(request, outcome.text)
        missing = [c.name for c in outcome.calls if c.name not in available]
        if missing:
            return _text_response(
                request,
                f"I would need the {missing[0]} tool, which is not available right now. "
                "Nothing was changed.",
            )
        return _tool_response(request, [(c.name, c.input) for c in outcome.calls], outcome.intro)

    # --- job code sub-agent ---

    def _job_code(self, request: ModelRequest) -> ModelResponse:
        ctx = request.context
        job = ctx.job or {"key": ctx.job_key or "", "name": ctx.job_key or "this step"}
        name = str(job.get("name") or job.get("key"))
        rounds = _tool_rounds(request.messages)
        if not rounds:
            body = str(job.get("body") or "")
            if has_code(body) and not REWRITE.search(ctx.user_text):
                return _text_response(request, _review(name, body, str(job.get("adaptor") or "")))
            code = starter_code(job, ctx.adaptor_functions, ctx.user_text)
            intro = f'Writing starter code for "{name}" ({_operations(code)}).'
            return _tool_response(request, [("edit_job_code", _rewrite(code))], intro)
        _, last_input, result, is_error = rounds[-1][-1]
        if is_error or result.lstrip().lower().startswith("error"):
            if len(rounds) >= 2:
                return _text_response(
                    request,
                    f'I could not write code for "{name}" that passes the checks offline: '
                    f"{' '.join(result.split())[:300]} The code was left as it was.",
                )
            reason = "the starter code was rejected"
            intro = f'Replacing the code of "{name}" with a minimal valid placeholder.'
            code = minimal_code(name, reason, str(job.get("adaptor") or ""))
            return _tool_response(request, [("edit_job_code", _rewrite(code))], intro)
        code = str((last_input.get("edits") or [{}])[-1].get("new_code", ""))
        return _text_response(
            request,
            f'Wrote starter code for "{name}" using {_operations(code)}. It was generated '
            "offline from the adaptor's function signatures: check the UPPER_CASE "
            "placeholders and paths.",
        )


# --- helpers ------------------------------------------------------------------


def _operations(code: str) -> str:
    operations = list(dict.fromkeys(top_level_operations(code))) if code else []
    return ", ".join(f"{op}(...)" for op in operations) or "a placeholder"


def _review(name: str, body: str, adaptor: str = "") -> str:
    """What the offline agent can say about existing code it will not rewrite."""
    problems = check_job_code(
        body, load_catalogue().get(adaptor), version=split_adaptor(adaptor)[1]
    )
    if problems:
        found = f"The checks find these problems:\n{format_problems(problems, limit=10)}\n"
    else:
        found = "The syntax and OpenFn checks find no problems. "
    return (
        f'"{name}" already has code, and offline I can only write starter code, not change '
        f'existing logic. {found}Say "rewrite the code for {name} to ..." to replace it with '
        "starter code, or set ANTHROPIC_API_KEY for real code edits. The code was not changed."
    )


def _is_tool_results(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, list)
        and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _turn_start(messages: list[dict[str, Any]]) -> int:
    """Where this turn's tool rounds (assistant calls and their results) begin."""
    start = len(messages)
    while start > 0 and (
        messages[start - 1].get("role") == "assistant" or _is_tool_results(messages[start - 1])
    ):
        start -= 1
    return start


_CHANGE_NOTE = re.compile(
    r"(?:One new branch|One rule changed): [^\n]*?every other step and edge is unchanged\."
    r"(?: Note: [^\n]*?reaches it\.)?"
)


def _with_name_notes(text: str, messages: list[dict[str, Any]], rounds: list[ToolRound]) -> str:
    """``text`` and what a name the user typed became to fit OpenFn's name rule, as said
    before the calls (:func:`.grammar.name_note`), for a name a call that succeeded gave."""
    if not messages or not _is_tool_results(messages[-1]):
        return text
    said = "\n".join(
        str(block.get("text", ""))
        for message in messages[_turn_start(messages) :]
        if message.get("role") == "assistant" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "text"
    )
    given = [json.dumps(args) for calls in rounds for _, args, _, error in calls if not error]
    notes = [
        note
        for note, name in name_notes(said)
        if note not in text and any(json.dumps(name) in g for g in given)
    ]
    # A correction says which edge or rule it changes; repeated once every call succeeded.
    if all(not error for calls in rounds for *_, error in calls):
        notes += [n for n in dict.fromkeys(_CHANGE_NOTE.findall(said)) if n not in text]
    return ("\n" if "\n" in text else " ").join([text, *notes]) if notes else text


def _tool_rounds(messages: list[dict[str, Any]]) -> list[ToolRound]:
    """This turn's (tool, input, result, is_error) per round; [] before any tool ran."""
    if not messages or not _is_tool_results(messages[-1]):
        return []
    start = _turn_start(messages)
    rounds: list[ToolRound] = []
    uses: dict[str, tuple[str, dict[str, Any]]] = {}
    for message in messages[start:]:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        if message.get("role") == "assistant":
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    uses[block["id"]] = (block["name"], dict(block.get("input") or {}))
            continue
        current: ToolRound = []
        for block in content:
            if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                continue
            name, args = uses.get(block.get("tool_use_id", ""), ("tool", {}))
            current.append(
                (name, args, _result_text(block.get("content")), bool(block.get("is_error")))
            )
        rounds.append(current)
    return rounds


def _result_text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content or "")


def _rewrite(code: str) -> dict[str, Any]:
    return {"edits": [{"action": "rewrite", "new_code": code}]}


def _usage(request: ModelRequest, output: str) -> Usage:
    prompt = len(request.system) + len(json.dumps(request.messages, sort_keys=True, default=str))
    return Usage(input_tokens=prompt // 4 + 1, output_tokens=len(output) // 4 + 1)


def _text_response(request: ModelRequest, text: str) -> ModelResponse:
    return ModelResponse(
        content=[{"type": "text", "text": text}],
        stop_reason="end_turn",
        usage=_usage(request, text),
        model="offline",
    )


def _tool_response(
    request: ModelRequest, calls: list[tuple[str, dict[str, Any]]], intro: str = ""
) -> ModelResponse:
    seed = json.dumps([request.role, request.context.user_text, len(request.messages)])
    digest = hashlib.sha256(seed.encode()).hexdigest()[:10]
    content: list[dict[str, Any]] = [{"type": "text", "text": intro}] if intro else []
    content += [
        {"type": "tool_use", "id": f"toolu_off_{digest}_{i:02d}", "name": name, "input": args}
        for i, (name, args) in enumerate(calls)
    ]
    output = json.dumps(content, sort_keys=True)
    return ModelResponse(
        content=content, stop_reason="tool_use", usage=_usage(request, output), model="offline"
    )
