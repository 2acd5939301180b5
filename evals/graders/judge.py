"""The LLM judge: a rubric from ``evals/rubrics/<name>.md`` applied by Claude.

The judge's Claude is built by the model factory from the same configuration as
the models under test (:meth:`ModelConfig.from_env`: ``ANTHROPIC_API_KEY`` /
``ANTHROPIC_BASE_URL``, or ``PLANWRIGHT_PROVIDER=bedrock|vertex`` and its cloud
settings), with its own model ``PLANWRIGHT_JUDGE_MODEL`` mapped to the provider's
id. Without Claude (no key on the Claude API), and when the judge call itself fails,
the result is ``skipped`` -- never passed.
The judge answers through a forced ``grade`` tool call.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agents.models.base import ChatModel, ModelError, ModelRequest
from agents.models.factory import ROLES, ModelConfig, claude_model
from evals.execute import RunOutcome
from evals.graders.base import GradeResult
from evals.graders.structure import changed_paths
from evals.scenario import EVALS_DIR, Scenario
from tools.document.redaction import render_structure

RUBRICS_DIR = EVALS_DIR / "rubrics"
DEFAULT_JUDGE_MODEL = "claude-sonnet-4-6"

GRADE_TOOL: dict[str, Any] = {
    "name": "grade",
    "description": "Record your verdict on the assistant's turn.",
    "input_schema": {
        "type": "object",
        "properties": {
            "score": {"type": "integer", "minimum": 1, "maximum": 5},
            "passed": {"type": "boolean"},
            "comment": {"type": "string", "description": "One or two sentences: why."},
        },
        "required": ["score", "passed", "comment"],
    },
}


def load_rubric(name: str, directory: Path = RUBRICS_DIR) -> str:
    path = directory / f"{name}.md"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in directory.glob("*.md")))
        raise ValueError(f"no rubric {name!r} (known: {known})")
    return path.read_text(encoding="utf-8")


@dataclass
class JudgeConfig:
    """Where the judge's Claude runs (the models' configuration) and which model judges."""

    models: ModelConfig = field(default_factory=ModelConfig)
    model: str = DEFAULT_JUDGE_MODEL

    @classmethod
    def from_env(cls) -> JudgeConfig:
        return cls(
            models=ModelConfig.from_env(),
            model=os.environ.get("PLANWRIGHT_JUDGE_MODEL") or DEFAULT_JUDGE_MODEL,
        )

    @property
    def available(self) -> bool:
        return self.models.uses_anthropic

    def model_config(self) -> ModelConfig:
        """The models' configuration with the judge's model in every role."""
        return replace(self.models, model_ids=dict.fromkeys(ROLES, self.model), max_retries=2)


def render_case(scenario: Scenario, outcome: RunOutcome) -> str:
    """What the judge sees: the request(s), the start and end structure, the diff, the replies."""
    before, after = outcome.before_doc.structure, outcome.after_doc.structure
    turns = "\n".join(
        f"- user ({t.page} page{', read-only' if t.read_only else ''}): {t.content!r}"
        + (f" [approves confirmation: {t.approve}]" if t.approve is not None else "")
        for t in scenario.turns
    )
    replies = "\n".join(f"- assistant: {t.reply!r}" for t in outcome.turns)
    asked = outcome.confirmations
    return (
        f"# Scenario\n{scenario.description}\n"
        + (
            f"\nWhat a good outcome looks like: {scenario.expect.judge_notes}\n"
            if scenario.expect.judge_notes
            else ""
        )
        + f"\n# Conversation\n{turns}\n{replies}\n"
        + (f"\nConfirmations asked: {json.dumps(asked)}\n" if asked else "")
        + f"\n# Workflow before\n{render_structure(before)}\n"
        + f"\n# Workflow after\n{render_structure(after)}\n"
        + f"\n# Changed fields\n{', '.join(changed_paths(before, after)) or '(none)'}\n"
    )


class Judge:
    def __init__(self, config: JudgeConfig, model: ChatModel | None = None) -> None:
        self.config = config
        self._model = model
        if model is None and config.available:
            self._model = claude_model(config.model_config())

    @property
    def available(self) -> bool:
        return self._model is not None

    async def grade(self, scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
        rubric_name = scenario.expect.rubric
        if rubric_name is None:
            return None
        name = f"judge:{rubric_name}"
        if self._model is None:
            return GradeResult.skip(
                name, "no model key (ANTHROPIC_API_KEY or PLANWRIGHT_PROVIDER): judge skipped"
            )
        request = ModelRequest(
            role="planner",
            system=load_rubric(rubric_name),
            messages=[{"role": "user", "content": render_case(scenario, outcome)}],
            tools=[GRADE_TOOL],
            tool_choice={"type": "tool", "name": "grade"},
            max_tokens=512,
        )
        try:
            response = await self._model.create(request)
            verdict = next(u["input"] for u in response.tool_uses if u["name"] == "grade")
            score = min(max(int(verdict["score"]), 1), 5)
            passed = bool(verdict["passed"])
            comment = str(verdict.get("comment") or "")
        except (ModelError, StopIteration, KeyError, TypeError, ValueError) as exc:
            return GradeResult.skip(name, f"judge failed, not counted: {exc}")
        return GradeResult(name, round((score - 1) / 4, 3), passed, f"{score}/5: {comment}")
