"""``AnthropicModel``: the Messages API through the official ``anthropic`` SDK.

Every call streams (``client.messages.stream``) so answer text reaches
``on_text`` as it is produced. The request is laid out for the prompt cache:
tools, system, the earlier turns, then the turn's own material; breakpoints sit
on the system prompt, at the end of the earlier turns (what the next turn reads)
and on the newest user messages (a rolling breakpoint, so each round reads the
rounds before it). Retries and timeouts are the
SDK's own (``max_retries`` and ``timeout`` on the client); this module only
translates what is left after them into Planwright's model errors. The API key
never appears in a message, a log line or ``repr``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

import anthropic
from pydantic import SecretStr

from agents.models.base import (
    MalformedModelOutputError,
    ModelError,
    ModelRequest,
    ModelResponse,
    ModelRole,
    ModelTimeoutError,
    ModelUnavailableError,
    TextSink,
    Usage,
)
from agents.models.cache_layout import EPHEMERAL, MAX_BREAKPOINTS, rolling_breakpoints
from agents.models.deadline import RetryWaitCap
from agents.models.providers import SDKClient, platform_options

__all__ = ["AnthropicModel"]

logger = logging.getLogger(__name__)

# Statuses the SDK retries itself (408, 409, 429, 5xx incl. 529 overloaded): once they
# reach us its retries are spent, so the model is "unavailable" rather than wrong.
_TRANSIENT_STATUSES = frozenset({408, 409, 429})
# Error types an SSE ``error`` event can carry after a 200 that mean the same thing.
# Bedrock's event stream names them its own way (its modelled ResponseStream exceptions).
_TRANSIENT_TYPES = frozenset(
    {
        *("overloaded_error", "rate_limit_error", "api_error", "timeout_error"),
        *("serviceUnavailableException", "throttlingException", "internalServerException"),
        "modelTimeoutException",
    }
)
# The stream helper raises ValueError with this text for tool input JSON it cannot parse.
_BROKEN_TOOL_JSON = "Unable to parse tool parameter JSON"
_NO_CREDENTIALS = "Could not resolve authentication method"


MID_STREAM_RETRIES = 1
"""Retries of a stream that failed mid-way with a transient error before any text was
used. The SDK retries failed responses, not a 200 whose SSE stream later fails."""


def _usage_of(message: Any) -> Usage:
    usage = message.usage
    return Usage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
        cache_read_input_tokens=usage.cache_read_input_tokens or 0,
    )


def _spent(exc: BaseException, billed: list[Usage], model_id: str) -> BaseException:
    """``exc`` carrying what its failed streams had already spent, and on which model
    (read by the usage ledger, so a failed call is priced too)."""
    exc.spent_usage = sum(billed, Usage())  # type: ignore[attr-defined]
    exc.spent_model = model_id  # type: ignore[attr-defined]
    return exc


class _SinkFailedError(Exception):
    """Carries an exception raised by the caller's ``on_text`` past the SDK error mapping."""

    def __init__(self, original: Exception) -> None:
        super().__init__(repr(original))
        self.original = original


class AnthropicModel:
    """A :class:`~agents.models.base.ChatModel` backed by Claude.

    ``api_key`` / ``base_url`` left as ``None`` fall back to the SDK's own
    environment handling (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``) when the
    client is built, which happens lazily on the first call. ``models`` maps each
    role to a model id. Pass ``client`` to inject a ready ``AsyncAnthropic``.
    """

    name = "anthropic"

    def __init__(
        self,
        *,
        models: Mapping[ModelRole, str],
        api_key: SecretStr | str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        max_wait_s: float | None = None,
        client: SDKClient | None = None,
        owns_client: bool | None = None,
    ) -> None:
        self.models: dict[ModelRole, str] = dict(models)
        self._api_key = SecretStr(api_key) if isinstance(api_key, str) else api_key
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_wait_s = max_wait_s
        """Longest ``retry-after`` waited out (:class:`agents.models.deadline.RetryWaitCap`)."""
        self._client = client
        self._owns_client = client is None if owns_client is None else owns_client

    def __repr__(self) -> str:
        key = "set" if self._api_key is not None else "from-env"
        return (
            f"AnthropicModel(models={self.models!r}, base_url={self.base_url!r}, "
            f"api_key={key}, timeout={self.timeout!r}, max_retries={self.max_retries!r})"
        )

    # -- client ------------------------------------------------------------- #

    @property
    def client(self) -> SDKClient:
        """The SDK client, built on first use."""
        if self._client is None:
            kwargs: dict[str, Any] = {"timeout": self.timeout, "max_retries": self.max_retries}
            if self.max_wait_s is not None:
                kwargs["middleware"] = [RetryWaitCap(self.max_wait_s)]
            if self._api_key is not None:
                kwargs["api_key"] = self._api_key.get_secret_value()
            if self.base_url is not None:
                kwargs["base_url"] = self.base_url
            self._client = anthropic.AsyncAnthropic(**kwargs)
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client if this model built it."""
        if self._client is not None and self._owns_client:
            await self._client.close()
            self._client = None

    # -- calls -------------------------------------------------------------- #

    def model_for(self, role: ModelRole) -> str:
        try:
            return self.models[role]
        except KeyError:
            raise ModelError(f"no Anthropic model id configured for role {role!r}") from None

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """Messages API parameters for ``request``, with prompt-cache breakpoints.

        The caller's tool dicts are copied, never modified.
        """
        # The API reads tools, then system, then messages: one breakpoint on the system
        # prompt caches the tools too (the tools' own only when there is no system).
        params: dict[str, Any] = {
            "model": self.model_for(request.role),
            "max_tokens": request.max_tokens,
            "messages": rolling_breakpoints(
                request.messages,
                request.history_messages,
                limit=MAX_BREAKPOINTS - (1 if request.system or request.tools else 0),
            ),
        }
        if request.system:
            params["system"] = [
                {"type": "text", "text": request.system, "cache_control": dict(EPHEMERAL)}
            ]
        if request.tools:
            tools = list(request.tools)
            if not request.system:
                tools[-1] = {**tools[-1], "cache_control": dict(EPHEMERAL)}
            params["tools"] = tools
        if request.tool_choice is not None:
            params["tool_choice"] = request.tool_choice
        return params

    async def create(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        """One call; a stream that fails mid-way (overloaded, say) before any of its
        text reached ``on_text`` is retried once, since nothing of it was used yet."""
        params = self.build_params(request)
        model_id = params["model"]
        streamed: list[str] = []
        billed: list[Usage] = []  # what streams that failed mid-way had already spent
        for attempt in range(MID_STREAM_RETRIES + 1):
            try:
                message, request_id = await self._stream(params, on_text, streamed, billed)
                break
            except _SinkFailedError as failed:
                raise _spent(failed.original, billed, model_id) from None
            except asyncio.CancelledError as cancelled:
                _spent(cancelled, billed, model_id)
                raise
            except Exception as exc:
                mapped = self._translate(exc, request.role, model_id)
                if mapped is None:
                    _spent(exc, billed, model_id)
                    raise
                retry = (
                    isinstance(mapped, ModelUnavailableError)
                    and mapped.details.get("mid_stream")
                    and not streamed
                    and attempt < MID_STREAM_RETRIES
                )
                if not retry:
                    raise _spent(mapped, billed, model_id) from exc
                logger.info("anthropic %s stream failed mid-way; retrying once", request.role)

        response = ModelResponse(
            content=[self._block(block, request.role, model_id) for block in message.content],
            stop_reason=message.stop_reason or "",
            usage=sum(billed, _usage_of(message)),
            model=message.model,
        )
        logger.debug(
            "anthropic %s call: model=%s stop=%s usage=%s request_id=%s",
            request.role,
            response.model,
            response.stop_reason,
            response.usage.as_dict(),
            request_id,
        )
        return response

    async def _stream(
        self,
        params: dict[str, Any],
        on_text: TextSink | None,
        streamed: list[str],
        billed: list[Usage],
    ) -> tuple[Any, str | None]:
        async with self.client.messages.stream(**params, **platform_options(self.client)) as stream:
            try:
                async for event in stream:
                    if event.type == "text" and on_text is not None and event.text:
                        streamed.append(event.text)
                        try:
                            await on_text(event.text)
                        except Exception as exc:
                            raise _SinkFailedError(exc) from exc
                return await stream.get_final_message(), stream.request_id
            except BaseException:
                # Once message_start arrived the input was billed, whatever happens next
                # (an error event, a cancel): keep what the snapshot says was spent.
                with contextlib.suppress(AssertionError):  # nothing arrived: nothing billed
                    billed.append(_usage_of(stream.current_message_snapshot))
                raise

    # -- conversions -------------------------------------------------------- #

    @staticmethod
    def _block(block: Any, role: ModelRole, model_id: str) -> dict[str, Any]:
        if block.type == "text":
            return {"type": "text", "text": block.text}
        if block.type == "tool_use":
            if not isinstance(block.input, dict):
                raise MalformedModelOutputError(
                    f"model returned tool_use {block.name!r} whose input is "
                    f"{type(block.input).__name__}, not a JSON object",
                    role=role,
                    model=model_id,
                    tool=block.name,
                    tool_use_id=block.id,
                )
            return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
        # thinking / redacted_thinking / server tool blocks: keep them verbatim so they
        # can be sent back in the next request unchanged.
        dumped: dict[str, Any] = block.model_dump(mode="json", exclude_none=True)
        return dumped

    def _scrub(self, text: str) -> str:
        if self._api_key is not None:
            secret = self._api_key.get_secret_value()
            if secret:
                text = text.replace(secret, "***")
        return text

    def _translate(self, exc: Exception, role: ModelRole, model_id: str) -> ModelError | None:
        """Planwright's error for an SDK failure, or ``None`` to let ``exc`` through."""
        where: dict[str, Any] = {"role": role, "model": model_id}
        if isinstance(exc, anthropic.APITimeoutError):
            return ModelTimeoutError(
                f"Anthropic API did not answer within {self.timeout:g}s "
                f"(model {model_id}, after {self.max_retries} retries)",
                timeout=self.timeout,
                **where,
            )
        if isinstance(exc, anthropic.APIConnectionError):
            return ModelUnavailableError(
                f"could not reach the Anthropic API (model {model_id}, "
                f"after {self.max_retries} retries)",
                **where,
            )
        if isinstance(exc, anthropic.APIStatusError):
            return self._translate_status(exc, where)
        if isinstance(exc, ValueError) and str(exc).startswith(_BROKEN_TOOL_JSON):
            return MalformedModelOutputError(
                f"model returned tool input that is not valid JSON (model {model_id})",
                detail=self._scrub(str(exc))[:500],
                **where,
            )
        if isinstance(exc, TypeError) and str(exc).strip("\"'").startswith(_NO_CREDENTIALS):
            return ModelError(
                "no Anthropic credentials: set ANTHROPIC_API_KEY or pass api_key", **where
            )
        if isinstance(exc, anthropic.AnthropicError):
            return ModelError(
                f"Anthropic client error ({type(exc).__name__}): {self._scrub(str(exc))[:500]}",
                **where,
            )
        return None

    def _translate_status(self, exc: anthropic.APIStatusError, where: dict[str, Any]) -> ModelError:
        status = exc.status_code
        error_type = exc.type or ""
        api_message = self._scrub(exc.api_message or "")
        details: dict[str, Any] = {
            **where,
            "status": status,
            "request_id": exc.request_id,
            "error_type": error_type,
        }
        label = f"{status} {error_type}".strip()
        suffix = f": {api_message}" if api_message else ""
        ident = f" (request id {exc.request_id})" if exc.request_id else ""
        if status < 400:
            # An SSE ``error`` event after the stream had already started (HTTP 200).
            cls = ModelUnavailableError if error_type in _TRANSIENT_TYPES else ModelError
            return cls(
                f"Anthropic stream failed mid-way ({error_type}){suffix}{ident}",
                mid_stream=True,
                **details,
            )
        if status in _TRANSIENT_STATUSES or status >= 500:
            return ModelUnavailableError(
                f"Anthropic API unavailable ({label}) after {self.max_retries} retries"
                f"{suffix}{ident}",
                **details,
            )
        return ModelError(f"Anthropic API rejected the request ({label}){suffix}{ident}", **details)
