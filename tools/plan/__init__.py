"""Project plans (DESIGN §5a): the plan model and its checks, contracts, deltas and the
stored record. Pure functions over plain data; the plan turn (``agents.plan``) runs them."""

from tools.plan.delta import PlanDelta, WorkflowChange, plan_delta
from tools.plan.model import (
    Contract,
    PlannedTrigger,
    PlannedWorkflow,
    PlanProblem,
    ProjectPlan,
    check_plan,
    contracts,
    leaf_first_order,
    webhook_path,
)
from tools.plan.record import PlannedOutcome, PlanRecord

__all__ = [
    "Contract",
    "PlanDelta",
    "PlanProblem",
    "PlanRecord",
    "PlannedOutcome",
    "PlannedTrigger",
    "PlannedWorkflow",
    "ProjectPlan",
    "WorkflowChange",
    "check_plan",
    "contracts",
    "leaf_first_order",
    "plan_delta",
    "webhook_path",
]
