"""Property tests over random edit sequences.

Whatever sequence of tool calls runs (valid or not), on any of several base
documents: untouched bodies, every surviving id, comments and unknown fields
stay byte-identical; a rejected call leaves the YAML byte-identical; the
incremental YAML equals a full dump after every call; the emitted YAML reloads
to the same structure; and the comments that belong to surviving entries, to
sections or to the end of the document are still there.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.base import ToolContext
from tools.document import WorkflowDocument
from tools.registry import run_tool

SENTINEL_BLOCK = """\
  # The archive step is never named by the generated calls.
  archive:   # keep me
    id: 99999999-0000-4000-8000-000000000009
    name: Archive
    adaptor: '@openfn/language-http@6.5.1'
    x-canvas: {x: 10, y: 20}   # unknown field
    body: |
      // archive the referral
      post('/archive', { body: state => state.data });
"""

BASE = f"""\
# Referral intake, maintained by the intake team.
name: "Referral intake"
x-lightning: {{project: intake, concurrency: 1}}
jobs:
{SENTINEL_BLOCK}  fetch:
    id: 11111111-0000-4000-8000-000000000001
    name: Fetch referral
    adaptor: '@openfn/language-http@latest'
    body: |
      get('/referrals/' + $.id);
  check:
    id: 11111111-0000-4000-8000-000000000002
    name: Check coverage
    adaptor: '@openfn/language-fhir@latest'
    body: "// Add operations here"
triggers:
  webhook:
    id: 22222222-0000-4000-8000-000000000001
    type: webhook
    enabled: false
    webhook_reply: after_completion   # kept across edits
edges:
  webhook->fetch:
    id: 33333333-0000-4000-8000-000000000001
    source_trigger: webhook
    target_job: fetch
    condition_type: always
    enabled: true
  fetch->check:
    id: 33333333-0000-4000-8000-000000000002
    source_job: fetch
    target_job: check
    condition_type: on_job_success
    enabled: true
    x-note: unknown edge field
# end of workflow
"""

JOB_A = "11111111-0000-4000-8000-00000000000a"
JOB_B = "11111111-0000-4000-8000-00000000000b"
JOB_C = "11111111-0000-4000-8000-00000000000c"
EDGE_AB = "33333333-0000-4000-8000-0000000000ab"
EDGE_BC = "33333333-0000-4000-8000-0000000000bc"

# A leading comment right before a section with several entries (the header must
# be written once), a section key with an end-of-line comment and comment lines.
LEADING_COMMENT_SECTION = f"""\
# Exported from Lightning
jobs:   # the steps
  # keep this header
  a:
    id: {JOB_A}
    name: A
    adaptor: '@openfn/language-http@latest'
  b:
    id: {JOB_B}
    name: B
    adaptor: '@openfn/language-http@latest'
  c:
    id: {JOB_C}
    name: C
    adaptor: '@openfn/language-common@latest'
edges:   # wiring
  # edge header
  a->b:
    id: {EDGE_AB}
    source_job: a
    target_job: b
    condition_type: on_job_success
    enabled: true
"""

# Comment lines between entries, after a block scalar, before a section and at
# the end of the document; a flow-style entry with an end-of-line comment.
BETWEEN_ENTRIES = f"""\
name: Between
jobs:
  a:   # step a
    id: {JOB_A}
    name: A
    adaptor: '@openfn/language-http@latest'
    body: |
      get('/a');
    # inside a, after its body
  # above b
  b:
    id: {JOB_B}
    name: B
    adaptor: '@openfn/language-http@latest'   # pinned later
  # above c
  c:
    id: {JOB_C}
    name: C
    adaptor: '@openfn/language-common@latest'
    x-tags:
    - one
    - two
# before the triggers
triggers:
  webhook:
    id: 22222222-0000-4000-8000-000000000001
    type: webhook
    enabled: false
# before the edges
edges:
  a->b: {{id: {EDGE_AB}, source_job: a, target_job: b, condition_type: on_job_success}}   # flow edge
  # above the b-c edge
  b->c:
    id: {EDGE_BC}
    source_job: b
    target_job: c
    condition_type: on_job_failure
    enabled: true
# end of file
"""  # noqa: E501

FLOW_SECTION = f"""\
name: Flow
jobs: {{a: {{id: {JOB_A}, name: A, adaptor: '@openfn/language-common@latest'}}, b: {{id: {JOB_B}, name: B, adaptor: '@openfn/language-common@latest'}}}}
edges:
  a->b: {{id: {EDGE_AB}, source_job: a, target_job: b, condition_type: on_job_success}}
"""  # noqa: E501

# Bodies ending in a blank line are written with keep chomping (``|+``); ruamel
# cannot write a comment right after one, so moved comments must go elsewhere.
KEEP_CHOMP = f"""\
name: Keep
jobs:
  a:
    id: {JOB_A}
    name: A
    adaptor: '@openfn/language-http@latest'
    body: |+
      get('/a');

  b:
    id: {JOB_B}
    name: B
    adaptor: '@openfn/language-http@latest'
  # above c
  c:
    id: {JOB_C}
    name: C
    adaptor: '@openfn/language-http@latest'
    body: |+
      get('/c');

...
"""

EMPTY_SECTION = """\
name: Empty
jobs: {}
"""

NAME_ONLY = """\
name: Only a name
"""


@dataclass(frozen=True)
class Base:
    text: str
    # Comments that must survive: (text, id of the entry owning it, or None: always).
    sentinels: tuple[tuple[str, str | None], ...] = ()
    protected: frozenset[str] = field(default_factory=frozenset)  # keys no call names


BASES = {
    "fixture": Base(
        BASE,
        (
            ("# Referral intake, maintained by the intake team.", None),
            ("# keep me", "99999999-0000-4000-8000-000000000009"),
            ("# unknown field", "99999999-0000-4000-8000-000000000009"),
            ("# end of workflow", None),
        ),
        frozenset({"archive"}),
    ),
    "leading-comment-section": Base(
        LEADING_COMMENT_SECTION,
        (
            ("# Exported from Lightning", None),
            ("# the steps", None),
            ("# keep this header", None),
            ("# wiring", None),
            ("# edge header", None),
        ),
    ),
    "between-entries": Base(
        BETWEEN_ENTRIES,
        (
            ("# step a", JOB_A),
            ("# inside a, after its body", JOB_A),
            ("# above b", JOB_B),
            ("# above c", JOB_C),
            ("# before the triggers", None),
            ("# before the edges", None),
            ("# flow edge", EDGE_AB),
            ("# above the b-c edge", EDGE_BC),
            ("# end of file", None),
        ),
    ),
    "keep-chomp": Base(KEEP_CHOMP, (("# above c", JOB_C),)),
    "flow-section": Base(FLOW_SECTION),
    "empty-section": Base(EMPTY_SECTION),
    "name-only": Base(NAME_ONLY),
}

NAMES = ["Fetch referral", "Check coverage", "Notify", "Dedupe", "Upsert", "Prior auth", "Log"]
ADAPTORS = ["http", "fhir", "gmail", "@openfn/language-common", "dhis2", "nonsense"]
CONDITIONS = ["always", "on_job_success", "on_job_failure", "js_expression", None]
CRONS = ["0 7 * * 1-5", "*/15 * * * *", "61 * * * *", "0 9 1 * *"]
TOOLS = [
    "add_jobs",
    "update_jobs",
    "remove_jobs",
    "add_edges",
    "update_edges",
    "remove_edges",
    "set_trigger",
    "update_workflow",
    "create_workflow",
]


def _context() -> ToolContext:
    counter = itertools.count(1)
    return ToolContext(new_id=lambda: f"aaaaaaaa-0000-4000-8000-{next(counter):012d}")


def _keys(doc: WorkflowDocument, base: Base) -> list[str]:
    return [k for k in doc.structure.jobs if k not in base.protected] or ["missing"]


def _job_specs(data: st.DataObject, min_size: int = 1) -> list[dict[str, str]]:
    return data.draw(
        st.lists(
            st.fixed_dictionaries(
                {"name": st.sampled_from(NAMES), "adaptor": st.sampled_from(ADAPTORS)}
            ),
            min_size=min_size,
            max_size=3,
        )
    )


def _call(data: st.DataObject, doc: WorkflowDocument, base: Base) -> tuple[str, dict[str, Any]]:
    keys = _keys(doc, base)
    key = st.sampled_from([*keys, "missing", "Check coverage"])
    node = st.sampled_from([*keys, *doc.structure.triggers, "missing"])
    edge_pairs = [(e.source, e.target_job) for e in doc.structure.edges.values()]
    edge_ref = st.sampled_from(edge_pairs or [("x", "y")])
    tool = data.draw(st.sampled_from(TOOLS))
    if tool == "add_jobs":
        return tool, {"jobs": _job_specs(data)}
    if tool == "create_workflow":
        jobs = _job_specs(data)
        names = list(dict.fromkeys(j["name"] for j in jobs))
        edges = [{"source": a, "target": b} for a, b in itertools.pairwise(names)]
        derived = [n.lower().replace(" ", "-") for n in names]
        edges = [{"source": a, "target": b} for a, b in itertools.pairwise(derived)][: len(edges)]
        args: dict[str, Any] = {"name": "Start over", "jobs": jobs, "edges": edges}
        if data.draw(st.booleans()):
            args["trigger"] = {"type": "webhook"}
        return tool, args
    if tool == "update_jobs":
        item: dict[str, Any] = {"key": data.draw(key)}
        if data.draw(st.booleans()):
            item["name"] = data.draw(st.sampled_from(NAMES))
        if data.draw(st.booleans()):
            item["new_key"] = data.draw(st.sampled_from(["renamed", "step-x", "fetch", "bad key"]))
        if data.draw(st.booleans()):
            item["adaptor"] = data.draw(st.sampled_from(ADAPTORS))
        return tool, {"jobs": [item]}
    if tool == "remove_jobs":
        if data.draw(st.integers(0, 3)) == 0:  # start over: every step that may be named
            return tool, {"keys": [k for k in keys if k != "missing"] or ["missing"]}
        return tool, {"keys": data.draw(st.lists(key, min_size=1, max_size=2))}
    if tool == "add_edges":
        spec: dict[str, Any] = {"source": data.draw(node), "target": data.draw(key)}
        condition = data.draw(st.sampled_from(CONDITIONS))
        if condition:
            spec["condition_type"] = condition
        if condition == "js_expression" or data.draw(st.booleans()):
            spec["condition_expression"] = "state.data.ok === true"
        return tool, {"edges": [spec]}
    if tool == "update_edges":
        source, target = data.draw(edge_ref)
        update: dict[str, Any] = {"source": source, "target": target}
        condition = data.draw(st.sampled_from(CONDITIONS))
        if condition:
            update["condition_type"] = condition
        if data.draw(st.booleans()):
            update["condition_label"] = data.draw(st.sampled_from(["Label", ""]))
        if data.draw(st.booleans()):
            update["new_target"] = data.draw(key)
        if data.draw(st.booleans()):
            update["enabled"] = data.draw(st.booleans())
        return tool, {"edges": [update]}
    if tool == "remove_edges":
        source, target = data.draw(edge_ref)
        return tool, {"edges": [{"source": source, "target": target}]}
    if tool == "set_trigger":
        kind = data.draw(st.sampled_from(["webhook", "cron"]))
        trigger: dict[str, Any] = {"type": kind}
        if kind == "cron":
            trigger["cron_expression"] = data.draw(st.sampled_from(CRONS))
        if data.draw(st.booleans()):
            trigger["enabled"] = data.draw(st.booleans())
        return tool, trigger
    return tool, {"name": data.draw(st.sampled_from(["Intake v2", "Referral intake", "Érable"]))}


def _ids(doc: WorkflowDocument) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for section in ("jobs", "triggers", "edges"):
        for entry in doc.structure.section(section).values():  # type: ignore[arg-type]
            if entry.id:
                out[entry.id] = section
    return out


def _check_comments(base: Base, doc: WorkflowDocument, text: str) -> None:
    alive = _ids(doc)
    for comment, owner in base.sentinels:
        if owner is None or owner in alive:
            assert text.count(comment) == 1, (comment, text)


@settings(
    max_examples=240,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(base_name=st.sampled_from(sorted(BASES)), data=st.data())
def test_random_edit_sequences_preserve_what_they_do_not_touch(
    base_name: str, data: st.DataObject
) -> None:
    base = BASES[base_name]
    doc = WorkflowDocument.from_yaml(base.text)
    ctx = _context()
    assert doc.to_yaml() == base.text
    bodies = {job.id: job.body for job in doc.structure.jobs.values()}
    steps = data.draw(st.integers(min_value=1, max_value=12))
    for _ in range(steps):
        name, args = _call(data, doc, base)
        before_yaml = doc.to_yaml()
        before_ids = _ids(doc)
        result = run_tool(doc, name, args, context=ctx)
        after_yaml = doc.to_yaml()
        if not result.ok:
            assert after_yaml == before_yaml, (name, args, result.text)
            assert doc.dump_full() == before_yaml, (name, args)
            assert "was not changed" in result.text
            continue
        # Incremental emission is byte-identical to a from-scratch dump.
        assert after_yaml == doc.dump_full(), (name, args)
        # What we emit reloads to the same structure, and is written the same again.
        reloaded = WorkflowDocument.from_yaml(after_yaml)
        assert reloaded.structure == doc.structure, (name, args)
        assert reloaded.to_yaml() == after_yaml, (name, args)
        if data.draw(st.integers(0, 3)) == 0:
            doc = reloaded  # the service persists the YAML and loads it for a later turn
        # Surviving ids keep their section; new ids come only from the factory.
        after_ids = _ids(doc)
        for entity_id, section in after_ids.items():
            if entity_id in before_ids:
                assert before_ids[entity_id] == section
            else:
                assert entity_id.startswith("aaaaaaaa-"), entity_id
        # Bodies are never changed by structural tools.
        for job in doc.structure.jobs.values():
            if job.id in bodies:
                assert job.body == bodies[job.id]
        # Comments of surviving entries, sections and the document survive.
        _check_comments(base, doc, after_yaml)
        if base_name == "fixture":
            # The sentinel step, its comments and unknown fields survive verbatim.
            assert SENTINEL_BLOCK.split("\n", 1)[1] in after_yaml
            assert after_yaml.startswith("# Referral intake, maintained by the intake team.\n")
            assert "x-lightning: {project: intake, concurrency: 1}\n" in after_yaml
            assert after_yaml.endswith("# end of workflow\n")
        if base_name == "between-entries":
            assert after_yaml.endswith("# end of file\n")


@settings(max_examples=60, deadline=None)
@given(
    good=st.lists(st.sampled_from(["Notify", "Dedupe", "Upsert", "Log"]), min_size=0, max_size=3),
    bad=st.sampled_from(
        [
            {"name": "Archive", "adaptor": "http"},
            {"name": "Fine name", "adaptor": "not-an-adaptor"},
            {"name": "!!!", "adaptor": "http"},
            {"name": "Fine", "key": "fetch", "adaptor": "http"},
            {"name": "x" * 120, "adaptor": "http"},
        ]
    ),
    position=st.integers(min_value=0, max_value=3),
)
def test_a_batch_with_one_bad_item_writes_nothing(
    good: list[str], bad: dict[str, str], position: int
) -> None:
    doc = WorkflowDocument.from_yaml(BASE)
    jobs: list[dict[str, str]] = [{"name": n, "adaptor": "http"} for n in dict.fromkeys(good)]
    jobs.insert(min(position, len(jobs)), bad)
    result = run_tool(doc, "add_jobs", {"jobs": jobs}, context=_context())
    assert not result.ok
    assert doc.to_yaml() == BASE
    assert set(doc.structure.jobs) == {"archive", "fetch", "check"}
