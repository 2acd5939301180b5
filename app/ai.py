"""Model clients for the service: Claude with a key, the offline model without."""

from __future__ import annotations

from collections.abc import Mapping

from agents.models import AnthropicModel
from agents.models.base import ChatModel, ModelRole
from app.settings import Settings


def build_models(settings: Settings) -> Mapping[ModelRole, ChatModel]:
    if settings.uses_anthropic:
        claude = AnthropicModel(
            models={
                "router": settings.router_model,
                "planner": settings.planner_model,
                "job_code": settings.job_code_model,
            },
            api_key=settings.anthropic_api_key,
            base_url=settings.anthropic_base_url,
            timeout=settings.model_timeout_s,
            max_retries=settings.model_max_retries,
        )
        return {"router": claude, "planner": claude, "job_code": claude}
    from agents.models.offline import OfflineModel

    offline = OfflineModel()
    return {"router": offline, "planner": offline, "job_code": offline}
