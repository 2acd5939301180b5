"""Edge commands (:mod:`agents.offline.connections`): disconnect, retarget, then
connect, which also covers "run B if A fails" ("only" asks before dropping B's other
edges), conditions and enabling an edge.

Disconnecting comes first so "remove the connection between A and B" is not read
as removing steps; retargeting before connecting so "point A at C instead of B"
is not a new edge.
"""

from __future__ import annotations

from agents.offline import connections
from agents.offline.rules.base import Example, Rule, parser

RULES = [
    Rule(
        "disconnect",
        "edges",
        "command",
        parser(connections.disconnect),
        (),
        (
            Example(
                "disconnect check coverage from send email",
                "`remove_edges`",
                also=("remove the connection between check coverage and send email",),
                tools=("remove_edges",),
                menu="disconnect A from B",
            ),
        ),
    ),
    Rule(
        "retarget",
        "edges",
        "command",
        parser(connections.retarget),
        (),
        (
            Example(
                "make get referrals go to send sms instead of check coverage",
                "`update_edges` new_target",
                also=(
                    "point get referrals at send sms instead of check coverage",
                    "retarget the edge from get referrals to check coverage to send sms",
                ),
                tools=("update_edges",),
                menu="make A go to C instead of B",
            ),
        ),
    ),
    Rule(
        "connect",
        "edges",
        "command",
        parser(connections.connect),
        (),
        (
            Example(
                "connect get referrals to send sms on failure",
                "`add_edges` on_job_failure",
                tools=("add_edges",),
                menu="connect A to B on failure",
            ),
            Example(
                "run send email if get referrals fails",
                "an on-failure edge from Get referrals (the edge from Check coverage stays)",
                tools=("add_edges",),
                menu="run B if A fails",
            ),
            Example(
                "run send email only if get referrals fails",
                "Send email also runs after Check coverage: asks whether that edge goes "
                "(names it and the commands for replacing it or keeping it); changes nothing",
                says=("already runs after", "disconnect Check coverage from Send email"),
            ),
            Example(
                "hook up get referrals with send email when state.data.urgent",
                "`add_edges` js_expression",
                tools=("add_edges",),
                menu="connect A to B when state.data.ok",
            ),
            Example(
                "only run send email on failure",
                "`update_edges` on its one incoming edge (asks if it has several)",
                also=("run send email only when the plan is HMO",),
                tools=("update_edges",),
            ),
            Example(
                "make the edge from check coverage to send email always",
                "`update_edges` condition",
                tools=("update_edges",),
            ),
            Example(
                "disable the edge from check coverage to send email",
                "`update_edges` enabled (`enable …` turns it back on)",
                tools=("update_edges",),
            ),
            Example(
                "connect the trigger to check coverage",
                "retargets the trigger's edge (a trigger starts exactly one step)",
                tools=("update_edges",),
            ),
        ),
    ),
]
