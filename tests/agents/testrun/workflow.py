"""Planwright YAML documents for the runner's tests: a webhook trigger, jobs, edges."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    key: str
    body: str
    adaptor: str = "common"
    """``common``, ``http``, ``fhir``, ... (``@openfn/language-<adaptor>@latest``), or with
    a version (``http@7.3.2``)."""
    name: str | None = None
    credential: str | None = None
    """The credential the step names (its ``configuration`` in the ``cli`` export)."""


@dataclass(frozen=True)
class Edge:
    source: str
    """A job key or ``webhook``."""
    target: str
    condition: str = "on_job_success"
    expression: str | None = None
    label: str | None = None


def workflow(jobs: Sequence[Job], edges: Sequence[Edge] | None = None) -> str:
    """The document; ``edges`` default to webhook -> first job -> ... -> last (on success)."""
    if edges is None:
        keys = ["webhook", *(j.key for j in jobs)]
        edges = [
            Edge(s, t, "always" if s == "webhook" else "on_job_success")
            for s, t in itertools.pairwise(keys)
        ]
    lines = ["name: Runner test", "triggers:", "  webhook:", "    type: webhook", "jobs:"]
    for job in jobs:
        lines += [
            f"  {job.key}:",
            f"    name: {job.name or job.key.replace('-', ' ').title()}",
            f"    adaptor: '@openfn/language-{job.adaptor}"
            + ("'" if "@" in job.adaptor else "@latest'"),
            *([f"    credential: {job.credential}"] if job.credential else []),
            "    body: |",
            *(f"      {line}" for line in job.body.splitlines()),
        ]
    lines.append("edges:")
    for edge in edges:
        kind = "trigger" if edge.source == "webhook" else "job"
        lines += [
            f"  {edge.source}->{edge.target}:",
            f"    source_{kind}: {edge.source}",
            f"    target_job: {edge.target}",
            f"    condition_type: {edge.condition}",
        ]
        if edge.expression is not None:
            lines.append(f"    condition_expression: {json.dumps(edge.expression)}")
        if edge.label is not None:
            lines.append(f"    condition_label: {edge.label}")
    return "\n".join(lines) + "\n"
