"""The strict fake answering as Amazon Bedrock and Vertex AI serve Claude.

:class:`FakeCloudServer` is a :class:`~tests.fakes.anthropic_server.FakeAnthropicServer`
that also answers each platform's own paths, auth and framing, the way the
``anthropic`` SDK's ``AnthropicBedrock`` / ``AnthropicVertex`` clients reach them:

* **Bedrock** (InvokeModel): ``POST /model/{model id}/invoke`` and
  ``/model/{model id}/invoke-with-response-stream``. The request must carry an AWS
  SigV4 ``Authorization`` header for the fake's access key, region and service
  ``bedrock``, and the signature is checked (403 ``InvalidSignatureException``
  otherwise), or a Bedrock API key as ``Authorization: Bearer <key>`` (what the SDK
  sends for ``AWS_BEARER_TOKEN_BEDROCK``; another key is 403
  ``UnrecognizedClientException``). Bedrock has no token-counting path the SDK can
  reach (its client refuses ``count_tokens``), so the fake has none either. The body
  has no ``model`` and no ``stream`` (the path says both) and an
  ``anthropic_version``: ``bedrock-2023-05-31``; the SDK's own default API version
  is refused for ARN-versioned ids (``...-v1:0``, ``...-v1``), as Anthropic's Bedrock
  page warns. A stream answers in AWS event-stream framing: one ``chunk`` event per
  Messages API event, its JSON base64 in ``{"bytes": ...}``; a mid-stream error is an
  ``exception`` message.
* **Vertex AI**: ``POST /v1/projects/{p}/locations/{r}/publishers/anthropic/models/
  {model id}:rawPredict`` (``:streamRawPredict`` answers SSE, as the Claude API does),
  ``Authorization: Bearer <the fake's access token>`` (401 ``UNAUTHENTICATED``
  otherwise), the project and region the fake was given, no ``model`` in the body and
  ``anthropic_version: vertex-2023-10-16``. Token counting is ``POST .../publishers/
  anthropic/models/count-tokens:rawPredict`` with the same auth and version and the
  Vertex model id in the body's ``model``; it answers ``{"input_tokens": N}`` counted
  as on the Claude API (listed in ``count_tokens_requests``).

Model ids are the platforms' own (from Anthropic's "model ids and versions" page):
Bedrock ``anthropic.<dated id>-v1:0`` for dated models, ``anthropic.claude-opus-4-6-v1``,
``anthropic.<id>`` from Sonnet 4.6 on; Vertex ``<alias>@<date>`` for dated models, the
API id otherwise. An id the platform does not name that way is 404. Once accepted, a
request is judged and answered exactly as on the Claude API (same rules, cache,
usage and scripted replies), under the Claude API id it names.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.cache import estimate_input_tokens
from tests.fakes.models import known_models
from tests.fakes.recording import RecordedRequest
from tests.fakes.rules import check_request

__all__ = ["BEDROCK_VERSION", "VERTEX_VERSION", "FakeCloudServer", "bedrock_ids", "vertex_ids"]

BEDROCK_VERSION = "bedrock-2023-05-31"
VERTEX_VERSION = "vertex-2023-10-16"
_DATED = re.compile(r"(claude-[a-z]+-\d+-\d+)-(\d{8})")


def bedrock_ids() -> dict[str, str]:
    """Bedrock model id -> the Claude API id it names."""
    out: dict[str, str] = {}
    for model_id in known_models():
        if _DATED.fullmatch(model_id):
            out[f"anthropic.{model_id}-v1:0"] = model_id
        elif not any(k.startswith(f"{model_id}-") and _DATED.fullmatch(k) for k in known_models()):
            suffix = "-v1" if model_id == "claude-opus-4-6" else ""
            out[f"anthropic.{model_id}{suffix}"] = model_id
    return out


def vertex_ids() -> dict[str, str]:
    """Vertex model id -> the Claude API id it names."""
    out: dict[str, str] = {}
    for model_id in known_models():
        match = _DATED.fullmatch(model_id)
        if match is not None:
            out[f"{match[1]}@{match[2]}"] = model_id
        elif not any(k.startswith(f"{model_id}-") and _DATED.fullmatch(k) for k in known_models()):
            out[model_id] = model_id
    return out


def _event_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One AWS event-stream message: prelude, its CRC, string headers, payload, CRC."""
    encoded = b"".join(
        bytes([len(name)])
        + name.encode()
        + b"\x07"
        + struct.pack(">H", len(value))
        + value.encode()
        for name, value in headers.items()
    )
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    prelude += struct.pack(">I", binascii.crc32(prelude) & 0xFFFFFFFF)
    body = prelude + encoded + payload
    return body + struct.pack(">I", binascii.crc32(body) & 0xFFFFFFFF)


def _chunk(data: bytes) -> bytes:
    payload = json.dumps({"bytes": base64.b64encode(data).decode()}).encode()
    headers = {
        ":event-type": "chunk",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return _event_message(headers, payload)


def _exception(kind: str, message: str) -> bytes:
    headers = {
        ":exception-type": kind,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return _event_message(headers, json.dumps({"message": message}).encode())


# Bedrock's ResponseStream exceptions for the API's error types (its modelled names;
# an unmodelled one would reach the SDK without its type).
_BEDROCK_EXCEPTIONS = {
    "overloaded_error": "serviceUnavailableException",
    "rate_limit_error": "throttlingException",
    "api_error": "internalServerException",
    "timeout_error": "modelTimeoutException",
    "invalid_request_error": "validationException",
}

_SSE = re.compile(rb"event: (?P<name>[^\n]+)\ndata: (?P<data>[^\n]*)\n\n")


class FakeCloudServer(FakeAnthropicServer):
    """The strict fake, also answering as Bedrock and Vertex AI (module docstring)."""

    def __init__(
        self,
        *,
        aws_access_key: str = "AKIDFAKEPLANWRIGHT",
        aws_secret_key: str = "fake-secret-key-for-tests-only",
        aws_region: str = "us-east-1",
        bedrock_api_key: str = "ABSKZmFrZS1iZWRyb2NrLWFwaS1rZXk=",
        vertex_token: str = "ya29.fake-vertex-token",
        vertex_project: str = "planwright-test",
        vertex_region: str = "us-east5",
    ) -> None:
        super().__init__()
        self.aws_access_key, self.aws_secret_key, self.aws_region = (
            aws_access_key,
            aws_secret_key,
            aws_region,
        )
        self.bedrock_api_key = bedrock_api_key
        self.vertex_token, self.vertex_project, self.vertex_region = (
            vertex_token,
            vertex_project,
            vertex_region,
        )
        vertex = "/v1/projects/{project}/locations/{region}/publishers/anthropic/models/{call}"
        self._app.router.routes[0:0] = [
            Route("/model/{model_id}/invoke", self._bedrock, methods=["POST"]),
            Route("/model/{model_id}/invoke-with-response-stream", self._bedrock, methods=["POST"]),
            Route(vertex, self._vertex, methods=["POST"]),
        ]

    @property
    def vertex_base_url(self) -> str:
        """Where ``AnthropicVertex(base_url=...)`` reaches this fake (it adds no ``/v1``)."""
        return f"{self.base_url}/v1"

    # -- Bedrock ------------------------------------------------------------ #

    async def _bedrock(self, request: Request) -> Response:
        recorded = await self._record(request, self._requests)
        request_id = self._next_request_id()
        auth = recorded.headers.get("authorization", "")
        if auth.startswith("Bearer "):
            denied = None if auth == f"Bearer {self.bedrock_api_key}" else "Invalid API Key"
            kind = "UnrecognizedClientException"
        else:
            denied, kind = self._sigv4_problem(request, recorded), "InvalidSignatureException"
        if denied is not None:
            return JSONResponse(
                {"message": denied},
                status_code=403,
                headers={"x-amzn-errortype": kind, "request-id": request_id},
            )
        model_id = request.path_params["model_id"]
        api_id = bedrock_ids().get(model_id)
        if api_id is None:
            return self._error(request_id, 404, "not_found_error", f"no Bedrock model {model_id}")
        body = recorded.json
        versioned = model_id.endswith(("-v1:0", "-v1"))
        allowed = {BEDROCK_VERSION} if versioned else {BEDROCK_VERSION, "2026-10-21"}
        problem = self._platform_body_problem(body, allowed, forbid_stream=True)
        if problem is not None:
            return self._error(request_id, 400, "invalid_request_error", problem)
        streaming = request.url.path.endswith("/invoke-with-response-stream")
        answer = await self._answer(recorded, body, api_id, streaming, request_id)
        if not streaming or not isinstance(answer, StreamingResponse):
            return answer
        return StreamingResponse(
            self._event_stream(answer.body_iterator),
            media_type="application/vnd.amazon.eventstream",
            headers={"request-id": request_id},
        )

    def _sigv4_problem(self, request: Request, recorded: RecordedRequest) -> str | None:
        """Why the SigV4 signature of ``request`` does not hold, or ``None``."""
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        auth = recorded.headers.get("authorization", "")
        match = re.fullmatch(
            r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<day>\d{8})/(?P<region>[^/]+)/"
            r"(?P<service>[^/]+)/aws4_request, SignedHeaders=(?P<signed>[^,]+), "
            r"Signature=(?P<signature>[0-9a-f]{64})",
            auth,
        )
        if match is None:
            return "Missing or malformed SigV4 Authorization header"
        if match["key"] != self.aws_access_key:
            return "The security token included in the request is invalid"
        if (match["region"], match["service"]) != (self.aws_region, "bedrock"):
            return f"Credential should be scoped to {self.aws_region}/bedrock"
        stamp = recorded.headers.get("x-amz-date", "")
        if not stamp.startswith(match["day"]):
            return "x-amz-date does not match the credential scope"
        signed = match["signed"].split(";")
        raw_path = request.scope.get("raw_path", request.url.path.encode()).decode()
        query = f"?{recorded.query}" if recorded.query else ""
        host = recorded.headers.get("host", "")
        aws = AWSRequest(
            method=recorded.method,
            url=f"http://{host}{raw_path}{query}",
            headers={name: recorded.headers[name] for name in signed if name in recorded.headers},
            data=recorded.raw_body,
        )
        aws.context["timestamp"] = stamp
        signer = SigV4Auth(
            Credentials(self.aws_access_key, self.aws_secret_key), "bedrock", self.aws_region
        )
        expected = signer.signature(signer.string_to_sign(aws, signer.canonical_request(aws)), aws)
        if expected != match["signature"]:
            return "The request signature we calculated does not match the signature you provided"
        return None

    async def _event_stream(self, sse: AsyncIterator[Any]) -> AsyncIterator[bytes]:
        """The fake's SSE events re-framed as Bedrock's event stream."""
        buffer = b""
        async for part in sse:
            buffer += part if isinstance(part, bytes) else str(part).encode()
            while (match := _SSE.match(buffer)) is not None:
                buffer = buffer[match.end() :]
                if match["name"] == b"error":
                    error = json.loads(match["data"])["error"]
                    kind = _BEDROCK_EXCEPTIONS.get(error["type"], "modelStreamErrorException")
                    yield _exception(kind, error["message"])
                else:
                    yield _chunk(match["data"])

    # -- Vertex AI ---------------------------------------------------------- #

    async def _vertex(self, request: Request) -> Response:
        counting = request.path_params["call"] == "count-tokens:rawPredict"
        recorded = await self._record(
            request, self._count_tokens_requests if counting else self._requests
        )
        request_id = self._next_request_id()
        if recorded.api_key != self.vertex_token:
            return JSONResponse(
                {
                    "error": {
                        "code": 401,
                        "message": "Request had invalid authentication credentials.",
                        "status": "UNAUTHENTICATED",
                    }
                },
                status_code=401,
            )
        params = request.path_params
        model_id, _, method = params["call"].rpartition(":")
        if (params["project"], params["region"]) != (self.vertex_project, self.vertex_region):
            return self._error(request_id, 404, "not_found_error", "no such project or location")
        if counting:
            return self._vertex_count(recorded, request_id)
        api_id = vertex_ids().get(model_id)
        if api_id is None or method not in ("rawPredict", "streamRawPredict"):
            return self._error(request_id, 404, "not_found_error", f"no Vertex model {model_id}")
        body = recorded.json
        problem = self._platform_body_problem(body, {VERTEX_VERSION}, forbid_stream=False)
        if problem is not None:
            return self._error(request_id, 400, "invalid_request_error", problem)
        streaming = method == "streamRawPredict"
        if isinstance(body, dict) and bool(body.get("stream")) != streaming:
            return self._error(
                request_id,
                400,
                "invalid_request_error",
                f"{method} with stream={body.get('stream')}",
            )
        return await self._answer(recorded, body, api_id, streaming, request_id)

    def _vertex_count(self, recorded: RecordedRequest, request_id: str) -> Response:
        """``count-tokens:rawPredict``: the model is the body's (a Vertex id), not the path's."""
        body = recorded.json
        if not isinstance(body, dict):
            return self._error(request_id, 400, "invalid_request_error", "expected a JSON object")
        version = body.get("anthropic_version")
        if version != VERTEX_VERSION:
            message = f"anthropic_version: {version!r} is not supported (use {VERTEX_VERSION!r})"
            return self._error(request_id, 400, "invalid_request_error", message)
        api_id = vertex_ids().get(str(body.get("model")))
        if api_id is None:
            message = f"no Vertex model {body.get('model')!r}"
            return self._error(request_id, 404, "not_found_error", message)
        # count_tokens takes the message body without max_tokens (and never streams).
        first_party = {k: v for k, v in body.items() if k != "anthropic_version"}
        failed = check_request({**first_party, "model": api_id, "max_tokens": 1})
        if failed is not None:
            with self._lock:
                self._rejected.append(failed)
            return self._error(request_id, *failed)
        return JSONResponse(
            {"input_tokens": estimate_input_tokens(first_party)},
            headers={"request-id": request_id},
        )

    # -- shared ------------------------------------------------------------- #

    @staticmethod
    def _platform_body_problem(body: Any, versions: set[str], *, forbid_stream: bool) -> str | None:
        if not isinstance(body, dict):
            return "the body must be a JSON object"
        if "model" in body:
            return "model: Extra inputs are not permitted (the model is in the path)"
        if forbid_stream and "stream" in body:
            return "stream: Extra inputs are not permitted (the path says whether to stream)"
        version = body.get("anthropic_version")
        if version not in versions:
            return f"anthropic_version: {version!r} is not supported (use {sorted(versions)})"
        return None

    async def _answer(
        self, recorded: RecordedRequest, body: dict[str, Any], api_id: str, stream: bool, rid: str
    ) -> Response:
        """Judge and answer the request as the Claude API would, under ``api_id``."""
        first_party = {k: v for k, v in body.items() if k not in ("anthropic_version", "stream")}
        first_party["model"] = api_id
        if stream:
            first_party["stream"] = True
        failed = check_request(first_party)
        if failed is not None:
            with self._lock:
                self._rejected.append(failed)
            return self._error(rid, *failed)
        with self._lock:
            reply = self._queue.popleft() if self._queue else self.default_reply
            position = len(self._requests)
        if reply is None:
            return self._loud_error(
                rid, f"fake server: no scripted reply for request #{position} ({recorded.path})"
            )
        return await self._respond(reply, first_party, rid)
