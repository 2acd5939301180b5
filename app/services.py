"""Everything the app wires at start-up, in one place (built in ``lifespan``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from agents.graph import build_graph
from agents.models.base import ChatModel, ModelRole
from agents.models.factory import token_counter
from agents.plan.graph import build_plan_graph
from agents.plan.runtime import build_checkpointer
from agents.runner import TurnRunner
from agents.runtime import AgentConfig
from agents.tracing import LangfuseConfig, Tracer
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


async def _try_lock(conn: Any, key: int) -> bool:
    row = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (key,))).fetchone()
    return bool(row and row[0])


@asynccontextmanager
async def open_checkpointer(settings: Settings) -> AsyncIterator[Any]:
    """Postgres checkpointer when the database is Postgres, else a SQLite file."""
    url = normalise_url(settings.database_url)
    if url.startswith("postgresql"):
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg import AsyncConnection

        conninfo = url.replace("postgresql+asyncpg://", "postgresql://", 1)
        async with AsyncPostgresSaver.from_conn_string(conninfo) as saver:
            # Workers starting together on a new database would race the checkpoint
            # tables' CREATE TABLE (pg_type unique violation): set up one at a time.
            # Poll for the lock rather than block in pg_advisory_lock: a waiting
            # statement would hold up the holder's CREATE INDEX CONCURRENTLY forever.
            async with await AsyncConnection.connect(conninfo, autocommit=True) as guard:
                while not await _try_lock(guard, _PG_CHECKPOINT_SETUP_LOCK):
                    await asyncio.sleep(0.05)
                await saver.setup()
            yield saver
    else:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

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
        engine = create_engine(settings.database_url)
        stack.push_async_callback(engine.dispose)
        await migrate(engine)
        store = Store(engine)
        bus, lock = make_bus(settings.redis_url)
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
        runner = TurnRunner(build_graph(saver), keep_finished=False)
        models = models or build_models(settings)
        turns = TurnService(
            store=store,
            publisher=publisher,
            lock=lock,
            runner=runner,
            models=models,
            tokens=token_counter(models),
            tools=tools,
            config=AgentConfig(
                max_tool_calls=settings.max_tool_calls,
                max_yaml_bytes=settings.max_yaml_bytes,
                prices=settings.model_prices,
                history_token_budget=settings.history_token_budget,
                max_message_tokens=settings.max_message_tokens,
            ),
            lock_ttl_s=settings.turn_lock_ttl_s,
            tracer=tracer,
            prompt_loader=prompt_source.load if prompt_source else load_prompt,
        )
        turns.aids = runs  # the chat tool's runner and the last failed run for "fix it"
        stack.push_async_callback(turns.shutdown)
        # Plan turns pause for review in the shared checkpointer (any worker resumes them);
        # the workflow builds inside them run to their end, so memory holds theirs.
        plans = PlanTurnService(
            turns,
            TurnRunner(build_plan_graph(saver), keep_finished=False),
            build_graph(build_checkpointer()),
        )
        yield Services(
            settings,
            Authenticator(settings),
            store,
            bus,
            lock,
            tools,
            turns,
            runner,
            publisher,
            plans,
            runs,
        )
