"""The FastAPI application: built by a factory, resources wired in ``lifespan``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

from fastapi import FastAPI

from app.api import meta
from app.settings import Settings
from tools.base import ToolContext
from tools.catalogue import load_catalogue
from tools.docs_search import DocsIndex


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        catalogue = load_catalogue()
        docs = DocsIndex.build(catalogue, package_docs_dir=settings.adaptor_docs_dir)
        app.state.settings = settings
        app.state.tool_context = ToolContext(
            catalogue_loader=lambda: catalogue, docs_loader=partial(lambda d: d, docs)
        )
        yield

    app = FastAPI(title="Planwright", version="0.1.0", lifespan=lifespan)
    app.include_router(meta.router)
    return app
