"""The Messages API's request rules, checked the way the real API checks them.

:func:`check_request` answers ``None`` for a body the API would accept, or the
``(status, error_type, message)`` of its error: the body is validated with the
SDK's own param types (``MessageCreateParamsStreaming`` / ``NonStreaming``,
forced through pydantic so lazily validated iterables are checked too), then
the rules the types cannot express: the model exists and is not retired, its
``max_tokens`` and context window, tool names and schemas, ``tool_choice``
against the tools, non-empty content, every ``tool_use`` answered by a
``tool_result`` at the start of the next user message and no result without
its call, and at most four ``cache_control`` breakpoints. Messages quote the
real API's wording where it is known.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema
from anthropic.types import message_create_params
from pydantic import TypeAdapter, ValidationError

from tests.fakes.cache import estimate_input_tokens
from tests.fakes.models import lookup

__all__ = ["MAX_BREAKPOINTS", "RuleError", "check_request"]

MAX_BREAKPOINTS = 4
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
RuleError = tuple[int, str, str]

_STREAMING = TypeAdapter(message_create_params.MessageCreateParamsStreaming)
_NON_STREAMING = TypeAdapter(message_create_params.MessageCreateParamsNonStreaming)
_FIELDS = frozenset(typing.get_type_hints(message_create_params.MessageCreateParamsStreaming))


def _invalid(message: str) -> RuleError:
    return (400, "invalid_request_error", message)


def _force(value: object) -> object:
    """Consume pydantic's lazy iterables so their items are validated now."""
    if isinstance(value, Mapping):
        return {k: _force(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_force(v) for v in value]
    if isinstance(value, Iterator):
        return [_force(v) for v in value]
    return value


def _types(body: dict[str, Any]) -> RuleError | None:
    extra = sorted(set(body) - _FIELDS)
    if extra:
        return _invalid(f"{extra[0]}: Extra inputs are not permitted")
    adapter = _STREAMING if body.get("stream") is True else _NON_STREAMING
    try:
        _force(adapter.validate_python(body))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return _invalid(f"{where}: {first['msg']}")
    return None


def _content(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def _messages(messages: list[Any]) -> RuleError | None:
    if not messages:
        return _invalid("messages: at least one message is required")
    if messages[0].get("role") != "user":
        return _invalid('messages: first message must use the "user" role')
    for index, message in enumerate(messages):
        blocks = _content(message)
        final_assistant = index == len(messages) - 1 and message.get("role") == "assistant"
        if not blocks and not final_assistant:
            return _invalid(
                f"messages.{index}: all messages must have non-empty content except for "
                "the optional final assistant message"
            )
        for position, block in enumerate(blocks):
            if block.get("type") == "text" and not block.get("text"):
                return _invalid(
                    f"messages.{index}.content.{position}.text: "
                    "text content blocks must be non-empty"
                )
        uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        if message.get("role") == "user" and any(b.get("type") == "tool_use" for b in blocks):
            return _invalid(f"messages.{index}: user messages may not contain tool_use blocks")
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if results:
            previous = _content(messages[index - 1]) if index else []
            asked = {b.get("id") for b in previous if b.get("type") == "tool_use"}
            stray = [b["tool_use_id"] for b in results if b["tool_use_id"] not in asked]
            if stray or message.get("role") != "user":
                return _invalid(
                    f"messages.{index}.content.0: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {', '.join(stray)}. Each `tool_result` block must "
                    "have a corresponding `tool_use` block in the previous message."
                )
            leading = 0
            while leading < len(blocks) and blocks[leading].get("type") == "tool_result":
                leading += 1
            if leading != len(results):
                return _invalid(
                    f"messages.{index}: `tool_result` blocks must come first in the content "
                    "of a user message, before any other block"
                )
        if uses:
            following = _content(messages[index + 1]) if index + 1 < len(messages) else []
            answered = {b.get("tool_use_id") for b in following if b.get("type") == "tool_result"}
            missing = [u for u in uses if u not in answered]
            if missing:
                return _invalid(
                    f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                    "corresponding `tool_result` block in the next message."
                )
    return None


def _tools(body: Mapping[str, Any]) -> RuleError | None:
    tools = body.get("tools") or []
    names: set[str] = set()
    for index, tool in enumerate(tools):
        if tool.get("type") not in (None, "custom"):
            continue  # server tools carry their own shape
        name = tool.get("name", "")
        if not TOOL_NAME.match(name):
            return _invalid(
                f"tools.{index}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
            )
        if name in names:
            return _invalid(f"tools: Tool names must be unique. Duplicate: {name}")
        names.add(name)
        schema = tool.get("input_schema")
        if not isinstance(schema, Mapping) or schema.get("type") != "object":
            return _invalid(f"tools.{index}.custom.input_schema.type: Input should be 'object'")
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            return _invalid(
                f"tools.{index}.custom.input_schema: JSON schema is invalid. It must match "
                f"JSON Schema draft 2020-12 ({exc.message})"
            )
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping):
        if not tools and choice.get("type") != "none":
            return _invalid("tool_choice: tool_choice may only be specified while providing tools")
        if choice.get("type") == "tool" and choice.get("name") not in names:
            return _invalid(f"tool_choice.name: Tool '{choice.get('name')}' not found in tools")
    return None


def _breakpoints(body: Mapping[str, Any]) -> int:
    count = 1 if isinstance(body.get("cache_control"), Mapping) else 0
    system = body.get("system")
    blocks: list[Any] = list(body.get("tools") or [])
    if isinstance(system, list):
        blocks += system
    for message in body.get("messages") or []:
        for block in _content(message):
            blocks.append(block)
            if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                blocks += block["content"]
    return count + sum(1 for b in blocks if isinstance(b, Mapping) and b.get("cache_control"))


def check_request(body: object) -> RuleError | None:
    """``None`` when the real API would take ``body``, else its error."""
    if not isinstance(body, dict):
        return _invalid("request body must be a JSON object")
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            return _invalid(f"{name}: Field required")
    failed = _types(body)
    if failed is not None:
        return failed
    model = lookup(body["model"])
    if model is None:
        return (404, "not_found_error", f"model: {body['model']}")
    if body["max_tokens"] < 1:
        return _invalid("max_tokens: Input should be greater than or equal to 1")
    if body["max_tokens"] > model.max_tokens:
        return _invalid(
            f"max_tokens: {body['max_tokens']} > {model.max_tokens}, which is the maximum "
            f"allowed number of output tokens for {model.id}"
        )
    for check in (_tools(body), _messages(body["messages"])):
        if check is not None:
            return check
    count = _breakpoints(body)
    if count > MAX_BREAKPOINTS:
        return _invalid(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {count}."
        )
    prompt = estimate_input_tokens(body)
    if prompt > model.context_window:
        return _invalid(f"prompt is too long: {prompt} tokens > {model.context_window} maximum")
    return None
