"""Side-by-side comparison of two ``results.json`` files (e.g. two prompt versions).

Besides pass rates and per-scenario numbers it shows each scenario's *output*:
whether the final workflow (``final_yaml``) is the same in both runs, and a
unified diff of it where it differs, so a reviewer sees what a prompt change
does to the workflows it produces, not only whether graders still pass.
UUID ``id:`` values are masked first: every run mints fresh ones, so they would
make every new entry differ (whether ids are kept is ``ids_preserved``'s job).
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any


def load_results(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    for key in ("model", "prompts", "pass_rate", "scenarios"):
        if key not in data:
            raise ValueError(f"{path} is not a results.json (no {key!r})")
    return data


def label(data: dict[str, Any]) -> str:
    versions = ",".join(f"{r}={p['version']}" for r, p in sorted(data["prompts"].items()))
    return f"{data['model']} {versions}"


def _delta(a: float | None, b: float | None, fmt: str = "{:+g}") -> str:
    if a is None or b is None:
        return ""
    return fmt.format(round(b - a, 2)) if b != a else "0"


def _mark(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "-"
    mark = "PASS" if entry["passed"] else "FAIL"
    return mark if entry.get("runs", 1) == 1 else f"{mark} {entry['pass_count']}/{entry['runs']}"


def _category_rates(data: dict[str, Any]) -> dict[str, float]:
    stats: dict[str, list[bool]] = {}
    for s in data["scenarios"]:
        stats.setdefault(s["category"], []).extend(
            [True] * s.get("pass_count", int(s["passed"]))
            + [False] * (s.get("runs", 1) - s.get("pass_count", int(s["passed"])))
        )
    return {c: sum(v) / len(v) for c, v in stats.items() if v}


_MINTED_ID = re.compile(
    r"^(\s*id:\s*)['\"]?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}['\"]?\s*$",
    re.MULTILINE | re.IGNORECASE,
)


def final_yaml(entry: dict[str, Any] | None) -> str | None:
    """A scenario's final workflow with UUID ids masked (``None`` when absent)."""
    text = (entry or {}).get("final_yaml")
    return None if text is None else _MINTED_ID.sub(r"\1<id>", text)


def _output(sa: dict[str, Any] | None, sb: dict[str, Any] | None) -> str:
    """``same`` / ``differs`` / ``-`` (a side has no scenario or no final YAML)."""
    ya, yb = final_yaml(sa), final_yaml(sb)
    if ya is None or yb is None:
        return "-"
    return "same" if ya == yb else "differs"


def output_diff(sid: str, yaml_a: str, yaml_b: str) -> list[str]:
    """The Markdown section for one scenario whose final workflow differs."""
    diff = difflib.unified_diff(
        yaml_a.splitlines(),
        yaml_b.splitlines(),
        fromfile=f"A/{sid}.yaml",
        tofile=f"B/{sid}.yaml",
        lineterm="",
    )
    return [f"### {sid}", "", "```diff", *diff, "```", ""]


def _output_section(by_a: dict[str, Any], by_b: dict[str, Any]) -> list[str]:
    lines = ["", "## Output diffs (final workflow, A -> B)", ""]
    same, changed, missing, diffs = 0, 0, [], []
    for sid in [i for i in by_a if i in by_b]:
        ya, yb = final_yaml(by_a[sid]), final_yaml(by_b[sid])
        if ya is None or yb is None:
            missing.append(sid)
        elif ya == yb:
            same += 1
        else:
            changed += 1
            diffs += output_diff(sid, ya, yb)
    lines.append(f"{changed} scenario(s) produced a different workflow, {same} the same one.")
    if missing:
        lines.append(f"No final YAML to compare (older results.json?): {', '.join(missing)}.")
    lines.append("")
    return lines + diffs


def compare(a: dict[str, Any], b: dict[str, Any]) -> str:
    """The comparison as Markdown (A is the baseline, deltas are B - A)."""
    lines = [
        "# Eval comparison",
        "",
        f"- A: {label(a)}: pass rate {a['pass_rate']:.1%}",
        f"- B: {label(b)}: pass rate {b['pass_rate']:.1%}",
        f"- delta: {(b['pass_rate'] - a['pass_rate']) * 100:+.1f} points",
        "",
        "## Per category",
        "",
        "| category | A | B | delta |",
        "|---|---|---|---|",
    ]
    ra, rb = _category_rates(a), _category_rates(b)
    for cat in sorted(ra.keys() | rb.keys()):
        pa, pb = ra.get(cat), rb.get(cat)
        shown_a = f"{pa:.0%}" if pa is not None else "-"
        shown_b = f"{pb:.0%}" if pb is not None else "-"
        delta = f"{(pb - pa) * 100:+.0f} pts" if pa is not None and pb is not None else ""
        lines.append(f"| {cat} | {shown_a} | {shown_b} | {delta} |")
    lines += [
        "",
        "## Per scenario",
        "",
        "| scenario | category | A | B | output | rounds A/B (delta) | tokens A/B (delta) "
        "| latency ms A/B (delta) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    by_a = {s["id"]: s for s in a["scenarios"]}
    by_b = {s["id"]: s for s in b["scenarios"]}
    changed = 0
    for sid in list(by_a) + [i for i in by_b if i not in by_a]:
        sa, sb = by_a.get(sid), by_b.get(sid)
        base = sa or sb
        assert base is not None
        if sa is not None and sb is not None and sa["passed"] != sb["passed"]:
            changed += 1
        cells = []
        for key in ("tool_rounds", "tokens", "latency_ms"):
            va = sa[key] if sa else None
            vb = sb[key] if sb else None
            cells.append(
                f"{'-' if va is None else va}/{'-' if vb is None else vb} ({_delta(va, vb)})"
            )
        flag = " **changed**" if sa and sb and sa["passed"] != sb["passed"] else ""
        lines.append(
            f"| {sid}{flag} | {base['category']} | {_mark(sa)} | {_mark(sb)} | "
            f"{_output(sa, sb)} | " + " | ".join(cells) + " |"
        )
    lines += ["", f"{changed} scenario(s) changed outcome."]
    lines += _output_section(by_a, by_b)
    return "\n".join(lines) + "\n"


def compare_files(path_a: Path, path_b: Path, out: Path | None = None) -> tuple[str, Path]:
    text = compare(load_results(path_a), load_results(path_b))
    target = (out or Path.cwd()) / "compare.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return text, target
