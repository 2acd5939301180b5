"""Service metadata: health, the document JSON Schema, the tool definitions."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from app.deps import SettingsDep
from tools.document.schema import workflow_json_schema
from tools.registry import tool_definitions

router = APIRouter(tags=["meta"])


@router.get("/healthz")
def health(settings: SettingsDep) -> dict[str, str]:
    return {"status": "ok", "model": "anthropic" if settings.uses_anthropic else "offline"}


@router.get("/v1/schema/workflow")
def workflow_schema() -> dict[str, Any]:
    return workflow_json_schema()


@router.get("/v1/tools")
def tools(read_only: bool = False) -> list[dict[str, Any]]:
    return tool_definitions(read_only=read_only)
