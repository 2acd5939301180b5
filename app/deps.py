"""FastAPI dependencies as ``Annotated`` aliases, resolved from ``app.state``."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.settings import Settings
from tools.base import ToolContext


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def _tool_context(request: Request) -> ToolContext:
    context: ToolContext = request.app.state.tool_context
    return context


SettingsDep = Annotated[Settings, Depends(_settings)]
ToolContextDep = Annotated[ToolContext, Depends(_tool_context)]
