"""Scenario data files: the starting document, the user's turns and what must come of them.

A scenario is YAML under ``evals/scenarios/`` (one file may hold a list of
scenarios). Which models it runs on is data too:

- ``offline: true`` -- the offline model is documented to handle it
  (``agents/offline``), so the CI smoke run scores it;
- ``script:`` -- the model's turns, played back by ``ScriptedModel`` through the
  real graph (tests the harness and the graph, not a model);
- every scenario runs on ``anthropic`` (the ones with neither are anthropic-only).

References to steps in expectations (``ref``) are resolved against the
document: an exact job key, else an exact (case-insensitive) display name,
else, with a leading ``~``, a case-insensitive substring of key or name.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator
from ruamel.yaml import YAML

from agents.models.base import ModelRole
from evals.plan_scenario import PlanSpec
from tools.testrun import SampleResponse

EVALS_DIR = Path(__file__).resolve().parent
SCENARIOS_DIR = EVALS_DIR / "scenarios"
FIXTURES_DIR = EVALS_DIR / "fixtures"
SAMPLE_CONFIGURATION: dict[str, Any] = {"baseUrl": "https://sample.test"}
"""A run's default credential: relative URLs resolve against this made-up host (no call
leaves the machine; samples answer it)."""

Category = Literal[
    "add_specific",
    "add_vague",
    "remove",
    "rename",
    "retarget",
    "conditions",
    "triggers",
    "build",
    "sop",
    "start_over",
    "multi_change",
    "ambiguous",
    "question",
    "read_only",
    "errors",
    "job_code",
    "injection",
    "plan",
    "plan_feedback",
    "plan_reject",
    "plan_delta",
    "plan_refusal",
]
CATEGORIES: tuple[str, ...] = get_args(Category)
ModelKind = Literal["offline", "scripted", "anthropic"]
MODEL_KINDS: tuple[str, ...] = ("offline", "scripted", "anthropic")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TurnSpec(_Strict):
    content: str
    page: Literal["workflow", "job"] = "workflow"
    job_key: str | None = None
    read_only: bool = False
    errors: str | None = None
    approve: bool | None = Field(
        None, description="The answer to a confirmation, if the turn is expected to ask for one."
    )


class ToolCallSpec(_Strict):
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class ScriptStepSpec(_Strict):
    """One scripted model response: text, tool calls, or both (text first)."""

    text: str | None = None
    tool_calls: list[ToolCallSpec] = Field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0

    @model_validator(mode="after")
    def _not_empty(self) -> ScriptStepSpec:
        if self.text is None and not self.tool_calls:
            raise ValueError("a script step needs text or tool_calls")
        return self


class JobExpect(_Strict):
    ref: str
    name: str | None = None
    adaptor: str | None = Field(None, description="Short adaptor name, e.g. 'gmail'.")
    has_code: bool | None = None


class EdgeExpect(_Strict):
    source: str = Field(description="A job ref, a trigger key, or 'trigger' for any trigger.")
    target: str
    condition_type: str | None = None
    expression_contains: list[str] = Field(default_factory=list)
    enabled: bool | None = None


class EdgeRef(_Strict):
    source: str
    target: str


class TriggerExpect(_Strict):
    type: Literal["webhook", "cron"] | None = None
    enabled: bool | None = None
    cron_expression: str | None = None
    target: str | None = Field(None, description="Job ref of the step the trigger starts.")


class RunExpect(_Strict):
    """One test run of the final workflow in @openfn/runtime (``runs_in_openfn``), through
    the service's own runner (``agents.testrun``): a sample and the path it must take."""

    data: Any = Field(default_factory=dict, description="The input state.data.")
    responses: list[SampleResponse] = Field(
        default_factory=list,
        description="Sample answers for the run's HTTP calls (method, absolute URL; a URL "
        "ending in * answers every URL with that prefix). Any other call gets an error.",
    )
    configuration: dict[str, Any] = Field(
        default_factory=lambda: dict(SAMPLE_CONFIGURATION),
        description="Every step's credential for this run (addresses only, e.g. baseUrl: "
        "relative URLs in the code resolve against it).",
    )
    unmatched: list[str] = Field(
        default_factory=list,
        description="'METHOD URL' (URL may end in *) of calls no sample is meant to answer: "
        "each must be made; any other unanswered call is a problem.",
    )
    fail: str | None = Field(
        None, description="Job ref of a step forced to fail (after its own operations ran)."
    )
    path: list[str] = Field(description="Job refs of the steps that must start, in order.")

    @model_validator(mode="after")
    def _unmatched_shape(self) -> RunExpect:
        for item in self.unmatched:
            method, _, url = item.partition(" ")
            if not method.isalpha() or not url.strip():
                raise ValueError(f"unmatched {item!r}: expected 'METHOD URL'")
        return self


class Expectations(_Strict):
    # resulting structure
    jobs: list[JobExpect] = Field(default_factory=list)
    jobs_absent: list[str] = Field(default_factory=list)
    job_count: int | None = None
    edge_count: int | None = Field(
        None, description="Exactly this many edges (trigger edges included): nothing extra."
    )
    edges: list[EdgeExpect] = Field(default_factory=list)
    edges_absent: list[EdgeRef] = Field(default_factory=list)
    trigger: TriggerExpect | None = None
    triggers_absent: list[str] = Field(default_factory=list)
    workflow_name: str | None = None
    equal_except: list[str] | None = Field(
        None,
        description="Glob patterns over flattened paths (jobs.<key>.<field>, "
        "triggers.<key>.<field>, edges.<source>-><target>.<field>, name) that may differ; "
        "everything else must be equal to the start.",
    )
    # preservation and validity
    preserve: bool = True
    body_may_change: list[str] = Field(default_factory=list)
    valid: bool = True
    fix_problems: bool = False
    # behaviour
    mutation: Literal["none", "required", "any"] = "any"
    asks: bool = False
    placeholder_ok: bool = Field(
        False, description="With asks: adding one empty step (and its edges) is also fine."
    )
    route: Literal["planner", "job_code"] | None = None
    confirm: bool | None = None
    confirm_contains: list[str] = Field(
        default_factory=list,
        description="Each must appear (case-insensitive) in a confirmation question asked: "
        "the impact it names (DESIGN 5c), e.g. a step that would no longer run.",
    )
    reply_contains: list[str] = Field(default_factory=list)
    reply_excludes: list[str] = Field(default_factory=list)
    reply_matches_diff: bool = True
    # budget
    max_tool_rounds: int | None = 6
    max_tokens: int | None = None
    # test runs in OpenFn's runtime (evals.graders.runtime); empty: one smoke run
    runs: list[RunExpect] = Field(default_factory=list)
    # LLM judge
    rubric: str | None = "general"
    judge_notes: str = ""


class Scenario(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    category: Category
    description: str
    phrasing: Literal["specific", "vague", "n/a"] = "n/a"
    fixture: str | None = None
    yaml: str | None = None
    history: list[dict[str, str]] = Field(default_factory=list)
    turns: list[TurnSpec] = Field(default_factory=list)
    plan: PlanSpec | None = Field(
        None, description="Plan mode: turns on an in-memory project (evals/plan_scenario.py)."
    )
    offline: bool = Field(False, description="The offline model is documented to handle it.")
    script: dict[ModelRole, list[ScriptStepSpec]] | None = None
    expect: Expectations = Field(default_factory=Expectations)
    source: str | None = Field(None, exclude=True)

    @model_validator(mode="after")
    def _one_start(self) -> Scenario:
        if self.fixture is not None and self.yaml is not None:
            raise ValueError("give either fixture or yaml, not both")
        if self.plan is None and not self.turns:
            raise ValueError("a scenario needs turns (or a plan: section)")
        if self.plan is not None and (self.turns or self.fixture or self.yaml):
            raise ValueError("a plan scenario has its turns under plan: and starts empty")
        return self

    def runs_on(self, model: str) -> bool:
        if model == "offline":
            return self.offline
        if model == "scripted":
            if self.plan is not None:
                return self.plan.proposals is not None
            return self.script is not None
        return True

    @property
    def models(self) -> list[str]:
        return [m for m in MODEL_KINDS if self.runs_on(m)]

    def start_yaml(self, fixtures_dir: Path = FIXTURES_DIR) -> str:
        if self.yaml is not None:
            return self.yaml
        if self.fixture is None:
            return ""
        return (fixtures_dir / f"{self.fixture}.yaml").read_text(encoding="utf-8")


def _read_yaml(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def load_file(path: Path) -> list[Scenario]:
    data = _read_yaml(path)
    items = data if isinstance(data, list) else [data]
    scenarios = []
    for item in items:
        scenario = Scenario.model_validate(item)
        scenario.source = path.name
        scenarios.append(scenario)
    return scenarios


def load_scenarios(
    directory: Path = SCENARIOS_DIR,
    *,
    categories: Iterable[str] = (),
    model: str | None = None,
    ids: Iterable[str] = (),
) -> list[Scenario]:
    """All scenarios under ``directory``, filtered; duplicate ids are an error."""
    wanted_categories, wanted_ids = set(categories), set(ids)
    found: dict[str, Scenario] = {}
    for path in sorted(directory.glob("*.yaml")):
        for scenario in load_file(path):
            if scenario.id in found:
                raise ValueError(f"duplicate scenario id {scenario.id!r} in {path.name}")
            found[scenario.id] = scenario
    return [
        s
        for s in found.values()
        if (not wanted_categories or s.category in wanted_categories)
        and (not wanted_ids or s.id in wanted_ids)
        and (model is None or s.runs_on(model))
    ]


def fixture_names(fixtures_dir: Path = FIXTURES_DIR) -> list[str]:
    return sorted(p.stem for p in fixtures_dir.glob("*.yaml"))
