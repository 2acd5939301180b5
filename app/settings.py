"""The one settings class. Values come from the environment (and an optional .env).

Standard variable names are used where an ecosystem already has one
(``ANTHROPIC_API_KEY``, ``DATABASE_URL``, ``REDIS_URL``); the rest take the
``PLANWRIGHT_`` prefix. Secrets are ``SecretStr`` so they never print.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    TypeAdapter,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from agents.api import DEFAULT_MODEL_IDS, DEFAULT_PRICES, ModelPrice, Provider, model_id_problem
from tools.document.limits import DEFAULT_MAX_EDGES, DEFAULT_MAX_JOBS, DocumentLimits
from tools.document.yaml_io import DEFAULT_MAX_BYTES

TokenRole = Literal["editor", "reviewer", "admin"]


DEFAULT_DATA_DIR = Path(".data")


def _alias(name: str) -> AliasChoices:
    return AliasChoices(name, f"PLANWRIGHT_{name}")


def _data_dir(validated: dict[str, Any]) -> Path:
    # An invalid data_dir is missing here (pydantic reports it): the default stands in.
    return Path(validated.get("data_dir", DEFAULT_DATA_DIR))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="PLANWRIGHT_", env_file=".env", extra="ignore", populate_by_name=True
    )

    environment: Literal["development", "test", "production"] = "development"
    host: str = "127.0.0.1"
    port: int = 8000

    tokens: SecretStr | None = Field(
        None,
        description='Bearer tokens as JSON: {"<token>": "editor"} or '
        '{"<token>": {"role": "editor", "name": "Ana"}} (the name is shown as the author '
        "of versions). Unset: single-user mode, loopback only.",
    )
    identity_key: SecretStr | None = Field(
        None,
        description="Secret key for the opaque author labels of unnamed tokens (HMAC). "
        "Unset: derived from all configured tokens, so labels change when the tokens do.",
    )

    anthropic_api_key: SecretStr | None = Field(None, validation_alias=_alias("ANTHROPIC_API_KEY"))
    anthropic_base_url: str | None = Field(None, validation_alias=_alias("ANTHROPIC_BASE_URL"))
    router_model: str = DEFAULT_MODEL_IDS["router"]
    planner_model: str = DEFAULT_MODEL_IDS["planner"]
    job_code_model: str = DEFAULT_MODEL_IDS["job_code"]
    model_prices: dict[str, ModelPrice] = Field(
        default_factory=lambda: dict(DEFAULT_PRICES),
        description="USD per million tokens by model id, as JSON: "
        '{"<model id>": {"input": 3, "output": 15, "cache_write": 3.75, "cache_read": 0.3}}; '
        "merged over the defaults (Anthropic's list prices; offline and scripted cost 0).",
    )
    model_timeout_s: float = 120.0
    model_max_retries: int = 3
    model_max_wait_s: float = Field(
        60.0,
        gt=0,
        description="Longest retry-after the model client waits out; a rate limit or "
        "overload asking for longer fails the call (retry_after_too_long).",
    )
    turn_deadline_s: float = Field(
        600.0,
        gt=0,
        description="How long one run of a turn (from its start or a resume to its end or "
        "next pause) may take on model calls; past it the turn ends (turn_deadline).",
    )
    provider: Provider = Field(
        "anthropic",
        description="Where Claude runs: the Claude API (anthropic), Amazon Bedrock "
        "(bedrock) or Vertex AI (vertex), each through the anthropic SDK's own client.",
    )
    cloud_region: str | None = Field(
        None,
        description="Bedrock's AWS region or Vertex's region; unset: AWS_REGION / "
        "AWS_DEFAULT_REGION (Bedrock) or CLOUD_ML_REGION (Vertex).",
    )
    vertex_project_id: str | None = Field(
        None,
        description="Google Cloud project for Vertex; unset: ANTHROPIC_VERTEX_PROJECT_ID "
        "or the one of the application default credentials.",
    )
    vertex_access_token: SecretStr | None = Field(
        None,
        description="A Google OAuth access token for Vertex; unset: application default "
        "credentials (refreshed by google-auth).",
    )
    cloud_base_url: str | None = Field(
        None,
        description="Bedrock's or Vertex's endpoint; unset: the region's (or "
        "ANTHROPIC_BEDROCK_BASE_URL / ANTHROPIC_VERTEX_BASE_URL).",
    )
    max_tool_calls: int = 20
    history_token_budget: int = 8000
    max_message_tokens: int = 6000

    data_dir: Path = Field(
        DEFAULT_DATA_DIR,
        description="Where the service keeps what it writes as it runs: the SQLite database "
        "and the paused turns' checkpoints, each with its -wal and -shm files (made when "
        "first opened). Relative: to the working directory; .data is gitignored.",
    )
    # Declared after data_dir: their defaults are read from its validated value.
    database_url: str = Field(
        default_factory=lambda data: f"sqlite:///{_data_dir(data) / 'planwright.db'}",
        validation_alias=_alias("DATABASE_URL"),
        description="SQLite file or postgresql://...; unset: planwright.db in data_dir.",
    )
    redis_url: str | None = Field(None, validation_alias=_alias("REDIS_URL"))
    checkpoint_path: Path = Field(
        default_factory=lambda data: _data_dir(data) / "checkpoints.db",
        description="SQLite file for paused turns when DATABASE_URL is not Postgres; unset: "
        "checkpoints.db in data_dir.",
    )

    langfuse_public_key: str | None = Field(None, validation_alias=_alias("LANGFUSE_PUBLIC_KEY"))
    langfuse_secret_key: SecretStr | None = Field(
        None, validation_alias=_alias("LANGFUSE_SECRET_KEY")
    )
    langfuse_host: str = Field(
        "https://cloud.langfuse.com", validation_alias=_alias("LANGFUSE_HOST")
    )

    allowed_hosts: list[str] = Field(
        default_factory=lambda: ["127.0.0.1", "localhost", "[::1]"],
        description="Host names accepted in single-user mode (against DNS rebinding).",
    )

    max_yaml_bytes: int = DEFAULT_MAX_BYTES
    max_jobs: int = Field(
        DEFAULT_MAX_JOBS,
        ge=1,
        description="Most jobs one document (or all the workflows of one import) may hold; "
        "more is refused (413) before the document is parsed.",
    )
    max_edges: int = Field(
        DEFAULT_MAX_EDGES,
        ge=1,
        description="Most edges one document (or one import) may hold, checked as max_jobs.",
    )
    max_frame_bytes: int = 64 * 1024
    ws_compression: bool = Field(
        False,
        description="permessage-deflate on WebSockets: saves bandwidth, but costs one "
        "compression of every frame per socket (planwright serve passes it to uvicorn).",
    )
    gc_tidy_interval_s: float = Field(
        600.0,
        ge=0,
        description="How often the collector gets back the cyclic garbage that freezing "
        "after thread-pool jobs keeps (app/offload.py); each tidy stops every thread for "
        "one full collection (~300 ms). 0: never (memory then grows with uptime).",
    )
    max_body_bytes: int = Field(
        4 * 1024 * 1024,
        description="Largest HTTP request body; larger ones get 413 before they are read.",
    )
    send_queue_size: int = 256
    turn_lock_ttl_s: float = 30.0
    turn_lock_heartbeat_s: float = Field(
        3.0,
        gt=0,
        le=60,
        description="Expiry of a turn lock holder's heartbeat, renewed every third of it: a "
        "waiter that finds the holder's heartbeat gone takes the lock (its worker died) "
        "without waiting for turn_lock_ttl_s.",
    )
    turn_queue_size: int = Field(
        5,
        ge=0,
        le=100,
        description="Turns that may wait for a busy workflow (per workflow, across workers); "
        "one more is refused as busy. 0: no queue, a turn on a busy workflow is busy.",
    )
    redis_timeout_s: float = Field(
        0.5,
        gt=0,
        le=30,
        description="Longest wait for Redis: connecting, each command, a free pooled "
        "connection. A turn that cannot take its lock in time gets lock_unavailable.",
    )
    db_timeout_s: float = Field(
        1.0,
        gt=0,
        le=60,
        description="Longest wait for a database connection (connecting, or a free one in "
        "the store's and the checkpointer's pools).",
    )
    db_statement_timeout_s: float = Field(
        1.5,
        gt=0,
        le=600,
        description="Postgres statement_timeout of every statement the service runs "
        "(migrations excepted).",
    )
    adaptor_docs_dir: Path | None = Field(
        None, description="Folder of locally installed adaptor packages (planwright adaptor-docs)."
    )

    # -- test runs (DESIGN §5c): limits of each run in OpenFn's runtime ------------------
    run_timeout_s: float = Field(
        20.0,
        gt=0,
        le=120,
        description="Wall-clock limit of a test run whose request gives no timeout_s.",
    )
    run_max_timeout_s: float = Field(
        120.0,
        gt=0,
        le=120,
        description="Largest timeout_s a test run may ask for (a larger one is refused).",
    )
    run_memory_mb: int = Field(
        256, ge=32, le=8192, description="Heap limit of the node process of each test run (MB)."
    )
    run_output_bytes: int = Field(
        64 * 1024,
        ge=1024,
        le=16 * 1024 * 1024,
        description="Largest input, output or logs kept per step of a test run (bytes of "
        "JSON); larger ones are cut and the step marked truncated.",
    )
    run_total_output_bytes: int = Field(
        4 * 1024 * 1024,
        ge=64 * 1024,
        le=64 * 1024 * 1024,
        description="Everything one test run may report; past it the run is stopped and failed.",
    )
    run_runtime_dir: Path | None = Field(
        None,
        description="Where the pinned @openfn/runtime and adaptors are installed "
        "(python -m agents.testrun.install); unset: .cache/openfn-runtime in the checkout.",
    )
    web_assets_dir: Path | None = Field(
        None,
        description="Where the web page's pinned npm libraries are installed "
        "(python -m app.web.assets); unset: .cache/web-assets in the checkout.",
    )
    runs_per_worker: int = Field(
        2, ge=1, le=64, description="Test runs one worker process runs at once."
    )
    run_queue_wait_s: float = Field(
        5.0,
        ge=0,
        le=600,
        description="How long a test run waits for a free slot before it is refused as busy.",
    )
    run_list_limit: int = Field(
        50, ge=1, le=1000, description="Most runs GET /v1/workflows/{id}/runs returns."
    )

    @field_validator("model_prices", mode="after")
    @classmethod
    def _over_the_default_prices(cls, prices: dict[str, ModelPrice]) -> dict[str, ModelPrice]:
        # A price given for one model adds to the table rather than replacing it.
        return {**DEFAULT_PRICES, **prices}

    @model_validator(mode="after")
    def _refuse_unsafe_settings(self) -> Settings:
        if self.max_tool_calls < 1:
            raise ValueError("max_tool_calls must be at least 1")
        if self.history_token_budget < 0 or self.max_message_tokens < 1:
            raise ValueError("history_token_budget and max_message_tokens must be positive")
        if self.max_yaml_bytes < 1024:
            raise ValueError("max_yaml_bytes must be at least 1024")
        if self.max_body_bytes < self.max_yaml_bytes:
            raise ValueError("max_body_bytes must be at least max_yaml_bytes")
        if self.run_timeout_s > self.run_max_timeout_s:
            raise ValueError("run_timeout_s must not exceed run_max_timeout_s")
        if self.turn_lock_heartbeat_s >= self.turn_lock_ttl_s:
            raise ValueError("turn_lock_heartbeat_s must be below turn_lock_ttl_s")
        if self.run_output_bytes > self.run_total_output_bytes:
            raise ValueError("run_output_bytes must not exceed run_total_output_bytes")
        if self.uses_anthropic:  # an id the API would answer 404 stops start-up here
            for role in ("router", "planner", "job_code"):
                problem = model_id_problem(role, getattr(self, f"{role}_model"))
                if problem is not None:
                    raise ValueError(problem)
        roles = self.token_holders()
        if not roles and not _is_loopback(self.host):
            raise ValueError(
                f"refusing to listen on {self.host} without PLANWRIGHT_TOKENS: with no tokens "
                "the server is single-user and binds to 127.0.0.1 only"
            )
        if self.environment == "production" and not roles:
            raise ValueError("production needs PLANWRIGHT_TOKENS")
        if self.environment == "production" and any(len(t) < 16 for t in roles):
            raise ValueError("production tokens must be at least 16 characters")
        return self

    def token_holders(self) -> dict[str, TokenHolder]:
        """The configured tokens: who holds each (parsed from the secret JSON)."""
        if self.tokens is None or not self.tokens.get_secret_value().strip():
            return {}
        table = _TOKEN_TABLE.validate_json(self.tokens.get_secret_value())
        return {
            token: entry if isinstance(entry, TokenHolder) else TokenHolder(role=entry)
            for token, entry in table.items()
        }

    @property
    def uses_anthropic(self) -> bool:
        """Claude (on any provider) rather than the offline model: Bedrock and Vertex
        need no Anthropic key, the Claude API does."""
        if self.provider != "anthropic":
            return True
        return self.anthropic_api_key is not None and bool(
            self.anthropic_api_key.get_secret_value()
        )

    @property
    def single_user(self) -> bool:
        return not self.token_holders()

    @property
    def document_limits(self) -> DocumentLimits:
        """What a document sent by a client may hold (checked before it is parsed)."""
        return DocumentLimits(self.max_yaml_bytes, self.max_jobs, self.max_edges)


class TokenHolder(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    role: TokenRole
    name: str | None = Field(None, min_length=1, max_length=100)


_TOKEN_TABLE: TypeAdapter[dict[str, TokenRole | TokenHolder]] = TypeAdapter(
    dict[str, TokenRole | TokenHolder]
)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
