"""A local stub of the Langfuse HTTP API that records what the SDK sends.

Serves just enough of the API for ``langfuse==5.0.4`` (tracing over OTLP,
scores, prompts, datasets, project lookup) on 127.0.0.1, and keeps every
request: ``stub.spans`` decodes the OTLP protobuf exports into plain dicts,
``stub.scores`` holds the score batches, ``stub.prompts`` the stored prompt
versions, ``stub.datasets``/``stub.items`` the datasets and items.
"""

from __future__ import annotations

import gzip
import json
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

NOW = "2026-01-01T00:00:00.000Z"


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


@dataclass
class LangfuseStub:
    requests: list[Recorded] = field(default_factory=list)
    spans: list[dict[str, Any]] = field(default_factory=list)
    scores: list[dict[str, Any]] = field(default_factory=list)
    prompts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    datasets: dict[str, dict[str, Any]] = field(default_factory=dict)
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    fail_prompts: bool = False
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> LangfuseStub:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                url = urlparse(self.path)
                record = Recorded(
                    self.command,
                    unquote(url.path),
                    parse_qs(url.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                with stub._lock:
                    stub.requests.append(record)
                    status, payload = stub.route(record)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                ctype = (
                    "application/x-protobuf" if isinstance(payload, bytes) else "application/json"
                )
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    # -- routes ---------------------------------------------------------------- #

    def route(self, r: Recorded) -> tuple[int, Any]:
        path = r.path.removeprefix("/api/public")
        if path == "/otel/v1/traces":
            self._record_spans(r.body)
            return 200, b""
        if path == "/scores" and r.method == "POST":
            self.scores.extend(json.loads(r.body))
            return 202, {"message": "Accepted"}
        if path == "/projects":
            org = {"id": "org-1", "name": "Org"}
            return 200, {
                "data": [
                    {"id": "proj-1", "name": "Planwright", "organization": org, "metadata": {}}
                ]
            }
        if path.startswith("/v2/prompts"):
            return self._prompts(r, path.removeprefix("/v2/prompts").strip("/"))
        if path.startswith("/v2/datasets"):
            return self._datasets(r, path.removeprefix("/v2/datasets").strip("/"))
        if path == "/dataset-items":
            return self._items(r)
        return 404, {"message": f"stub: no route for {r.method} {r.path}"}

    def _record_spans(self, body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    self.spans.append(
                        {
                            "name": span.name,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_id": span.parent_span_id.hex(),
                            "attributes": {a.key: _value(a.value) for a in span.attributes},
                        }
                    )

    def _prompt_json(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"type": "text", "tags": [], "commitMessage": None, **p}

    def _prompts(self, r: Recorded, name: str) -> tuple[int, Any]:
        if self.fail_prompts:
            return 500, {"message": "stub: prompts unavailable"}
        if r.method == "POST":
            data = json.loads(r.body)
            versions = self.prompts.setdefault(data["name"], [])
            for old in versions:  # labels are unique per prompt; latest moves to the new one
                old["labels"] = [
                    x for x in old["labels"] if x not in data["labels"] and x != "latest"
                ]
            entry = {
                "name": data["name"],
                "version": len(versions) + 1,
                "prompt": data["prompt"],
                "config": data.get("config") or {},
                "labels": [*data.get("labels", []), "latest"],
                "tags": data.get("tags") or [],
                "commitMessage": data.get("commitMessage"),
            }
            versions.append(entry)
            return 200, self._prompt_json(entry)
        label = (r.query.get("label") or ["production"])[0]
        for entry in reversed(self.prompts.get(name, [])):
            if label in entry["labels"]:
                return 200, self._prompt_json(entry)
        return 404, {"message": f"prompt {name}@{label} not found"}

    def _datasets(self, r: Recorded, name: str) -> tuple[int, Any]:
        if r.method == "POST":
            data = json.loads(r.body)
            dataset = {
                "id": f"ds-{len(self.datasets) + 1}",
                "name": data["name"],
                "description": data.get("description"),
                "metadata": data.get("metadata"),
                "projectId": "proj-1",
                "createdAt": NOW,
                "updatedAt": NOW,
            }
            self.datasets[data["name"]] = dataset
            return 200, dataset
        if name in self.datasets:
            return 200, self.datasets[name]
        return 404, {"message": f"dataset {name} not found"}

    def _items(self, r: Recorded) -> tuple[int, Any]:
        if r.method == "POST":
            data = json.loads(r.body)
            dataset = self.datasets[data["datasetName"]]
            item = {
                "id": data["id"],
                "status": "ACTIVE",
                "input": data.get("input"),
                "expectedOutput": data.get("expectedOutput"),
                "metadata": data.get("metadata"),
                "datasetId": dataset["id"],
                "datasetName": dataset["name"],
                "createdAt": NOW,
                "updatedAt": datetime.now(UTC).isoformat(),
                "mediaReferences": [],
            }
            self.items[data["id"]] = item
            return 200, item
        name = (r.query.get("datasetName") or [""])[0]
        data = [i for i in self.items.values() if i["datasetName"] == name]
        meta = {"page": 1, "limit": len(data) or 1, "totalItems": len(data), "totalPages": 1}
        return 200, {"data": data, "meta": meta}

    # -- helpers for tests ------------------------------------------------------ #

    def spans_named(self, name: str) -> list[dict[str, Any]]:
        return [s for s in self.spans if s["name"] == name]

    def paths(self, method: str | None = None) -> list[str]:
        return [r.path for r in self.requests if method is None or r.method == method]
