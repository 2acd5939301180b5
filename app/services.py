"""Everything the app wires at start-up, in one place (built in ``lifespan``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from agents.api import (
    AgentConfig,
    ChatModel,
    LangfuseConfig,
    ModelRole,
    Tracer,
    TurnEngine,
    TurnRunner,
    plan_build_graph,
    token_counter,
)
from app.ai import build_models
from app.auth import Authenticator
from app.bus import make_bus
from app.bus.base import EventBus, TurnLock
from app.plan_turns import PlanTurnService
from app.publishing import Publisher
from app.runs import RunPolicy, RunService, build_runner
from app.settings import Settings
from app.store import Store, create_engine, migrate, normalise_url
from app.turns import TurnService
from prompts import load_prompt
from prompts.langfuse import LangfusePromptSource
from tools.base import ToolContext
from tools.catalogue.adaptors import load_catalogue
from tools.catalogue.docs_search import DocsIndex


@dataclass
class Services:
    settings: Settings
    auth: Authenticator
    store: Store
    bus: EventBus
    lock: TurnLock
    tools: ToolContext
    turns: TurnService
    runner: TurnRunner
    publisher: Publisher
    plans: PlanTurnService
    """Plan turns (project sessions, ``mode: plan``) and answers to any confirmation."""
    runs: RunService
    """Test runs in OpenFn's runtime (REST, the ``run`` frame, the chat tool's runner)."""


_PG_CHECKPOINT_SETUP_LOCK = 0x706C6371  # pg_advisory_lock key, distinct from migrations
# AsyncPostgresSaver runs every operation under one asyncio lock, so it never uses
# more than one connection at a time. One is also what lets the pool's check recover
# in a single step after an outage: with several idle dead connections, each found
# dead costs a backoff and the request times out before a live one is made.
_CHECKPOINT_POOL_SIZE = 1
_POOL_OPEN_S = 10.0  # start-up may wait longer than a request for the first connection


async def _try_lock(conn: Any, key: int) -> bool:
    cursor = await conn.execute("SELECT pg_try_advisory_lock(%s) AS locked", (key,))
    row = await cursor.fetchone()
    return bool(row and row["locked"])


@asynccontextmanager
async def open_checkpointer(settings: Settings) -> AsyncIterator[Any]:
    """Postgres checkpointer when the database is Postgres, else a SQLite file."""
    url = normalise_url(settings.database_url)
    if url.startswith("postgresql"):
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg import AsyncConnection
        from psycopg.rows import dict_row
        from psycopg_pool import AsyncConnectionPool

        conninfo = url.replace("postgresql+asyncpg://", "postgresql://", 1)
        statement_ms = max(1, round(settings.db_statement_timeout_s * 1000))
        # A pool, not the one connection from_conn_string opens: a connection the server
        # dropped (a restart, pg_terminate_backend) would fail every later turn. The
        # pool checks each connection as it lends it and opens a new one for a dead one.
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            conninfo,
            min_size=1,
            max_size=_CHECKPOINT_POOL_SIZE,
            timeout=settings.db_timeout_s,
            check=AsyncConnectionPool.check_connection,
            # No reconnection backoff: a failed attempt gives up at once, so the first
            # request after an outage connects then (psycopg_pool would otherwise wait
            # 1, 2, 4... s between attempts, and a request meanwhile times out).
            reconnect_timeout=0,
            # What AsyncPostgresSaver.from_conn_string sets on its connection.
            kwargs={
                "autocommit": True,
                "prepare_threshold": 0,
                "row_factory": dict_row,
                "connect_timeout": max(1, round(settings.db_timeout_s)),
                "options": f"-c statement_timeout={statement_ms}",
            },
            open=False,
            name="planwright-checkpoints",
        )
        await pool.open(wait=True, timeout=max(settings.db_timeout_s, _POOL_OPEN_S))
        try:
            checkpoints = AsyncPostgresSaver(pool)
            # Workers starting together on a new database would race the checkpoint
            # tables' CREATE TABLE (pg_type unique violation): set up one at a time.
            # Poll for the lock rather than block in pg_advisory_lock: a waiting
            # statement would hold up the holder's CREATE INDEX CONCURRENTLY forever.
            # The set-up runs on that guard connection, without the statement timeout
            # (a CREATE INDEX CONCURRENTLY waits for other transactions to end).
            async with await AsyncConnection.connect(
                conninfo,
                autocommit=True,
                prepare_threshold=0,
                row_factory=dict_row,
                connect_timeout=max(1, round(settings.db_timeout_s)),
            ) as guard:
                while not await _try_lock(guard, _PG_CHECKPOINT_SETUP_LOCK):
                    await asyncio.sleep(0.05)
                await AsyncPostgresSaver(guard).setup()
            yield checkpoints
        finally:
            await pool.close()
    else:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        settings.checkpoint_path.parent.mkdir(parents=True, exist_ok=True)
        async with AsyncSqliteSaver.from_conn_string(str(settings.checkpoint_path)) as saver:
            # Its tables are otherwise made by the first read or write; deleting a
            # turn's checkpoints (an abandoned turn's, say) may come first.
            await saver.setup()
            yield saver


@asynccontextmanager
async def open_services(
    settings: Settings, *, models: Mapping[ModelRole, ChatModel] | None = None
) -> AsyncIterator[Services]:
    async with AsyncExitStack() as stack:
        engine = create_engine(
            settings.database_url,
            timeout_s=settings.db_timeout_s,
            statement_timeout_s=settings.db_statement_timeout_s,
        )
        stack.push_async_callback(engine.dispose)
        await migrate(engine)
        store = Store(engine)
        bus, lock = make_bus(
            settings.redis_url,
            timeout_s=settings.redis_timeout_s,
            heartbeat_s=settings.turn_lock_heartbeat_s,
        )
        stack.push_async_callback(bus.close)
        publisher = Publisher(store, bus)
        stack.push_async_callback(publisher.close)  # before the bus closes
        catalogue = load_catalogue()
        docs = DocsIndex.build(catalogue, package_docs_dir=settings.adaptor_docs_dir)
        tools = ToolContext(catalogue_loader=lambda: catalogue, docs_loader=lambda: docs)
        langfuse = LangfuseConfig(
            public_key=settings.langfuse_public_key,
            secret_key=settings.langfuse_secret_key,
            host=settings.langfuse_host,
        ).client()
        prompt_source = LangfusePromptSource(langfuse) if langfuse is not None else None
        if langfuse is not None:
            stack.callback(langfuse.shutdown)
        if prompt_source is not None:
            # The SDK fetches prompts synchronously: warm its cache off the event loop,
            # so turns only ever hit the cache (the SDK refreshes it in the background).
            await asyncio.to_thread(prompt_source.prefetch)
        tracer = Tracer(
            langfuse,
            tags=[settings.environment],
            prompt_links=prompt_source.link if prompt_source else None,
        )
        saver = await stack.enter_async_context(open_checkpointer(settings))
        runs = RunService(
            store=store,
            runner=build_runner(settings),
            policy=RunPolicy.from_settings(settings),
            max_yaml_bytes=settings.max_yaml_bytes,
        )
        workflow_turns = TurnEngine.for_workflows(saver, tracer)
        models = models or build_models(settings)
        turns = TurnService(
            store=store,
            publisher=publisher,
            lock=lock,
            engine=workflow_turns,
            models=models,
            tokens=token_counter(models),
            tools=tools,
            config=AgentConfig(
                max_tool_calls=settings.max_tool_calls,
                max_yaml_bytes=settings.max_yaml_bytes,
                prices=settings.model_prices,
                history_token_budget=settings.history_token_budget,
                max_message_tokens=settings.max_message_tokens,
                turn_deadline_s=settings.turn_deadline_s,
            ),
            lock_ttl_s=settings.turn_lock_ttl_s,
            max_queue=settings.turn_queue_size,
            prompt_loader=prompt_source.load if prompt_source else load_prompt,
        )
        turns.aids = runs  # the chat tool's runner and the last failed run for "fix it"
        runs.drafts = turns  # a run frame while a proposal is open runs its draft
        stack.push_async_callback(turns.shutdown)
        # Plan turns pause for review in the shared checkpointer (any worker resumes them);
        # the workflow builds inside them run to their end, so memory holds theirs.
        plans = PlanTurnService(turns, TurnEngine.for_plans(saver, tracer), plan_build_graph())
        yield Services(
            settings,
            Authenticator(settings),
            store,
            bus,
            lock,
            tools,
            turns,
            workflow_turns.runner,
            publisher,
            plans,
            runs,
        )
