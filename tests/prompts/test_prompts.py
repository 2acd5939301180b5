"""Unit tests for prompts.loader and the shipped prompt files."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

import pytest

from prompts import (
    PromptError,
    PromptNotFoundError,
    PromptTemplate,
    PromptVariableError,
    list_prompts,
    load_prompt,
)
from prompts.loader import PROMPTS_DIR
from tools.errors import PlanwrightError
from tools.jobcode import check_job_code
from tools.registry import TOOLS

# The documented variables of every shipped role (see prompts/loader.py).
SHIPPED_VARIABLES: dict[str, set[str]] = {
    "router": {"page_context"},
    "planner": {"adaptors"},
    "planner_user": {"structure", "page_context", "mode", "errors", "message"},
    "job_code": set(),
    "job_code_user": {
        "step",
        "adaptor_functions",
        "neighbours",
        "current_code",
        "request",
        "problems",
    },
    "project_planner": set(),
    "project_planner_user": {"project", "plan", "mode", "message"},
    "plan_build": {"plan"},
}


def _write(directory: Path, role: str, version: str, text: str) -> Path:
    path = directory / role / f"{version}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def prompt_dir(tmp_path: Path) -> Path:
    _write(tmp_path, "greeter", "v1", "Hello {{name}}.\n")
    _write(tmp_path, "greeter", "v2", "Hi {{ name }}, from {{place}}.\n")
    _write(tmp_path, "greeter", "v10", "Hey {{name}}!\n")
    _write(tmp_path, "plain", "v1", "No variables here.\n")
    return tmp_path


# --------------------------------------------------------------------------- discovery


def test_latest_version_is_highest_number_not_lexical(prompt_dir: Path) -> None:
    template = load_prompt("greeter", directory=prompt_dir)
    assert template.version == "v10"
    assert template.version_number == 10
    assert template.render(name="Ada") == "Hey Ada!\n"


def test_explicit_version(prompt_dir: Path) -> None:
    template = load_prompt("greeter", "v2", directory=prompt_dir)
    assert (template.role, template.version, template.name) == ("greeter", "v2", "greeter")
    assert template.variables == frozenset({"name", "place"})
    assert template.text == "Hi {{ name }}, from {{place}}.\n"


@pytest.mark.parametrize("spelling", ["v2", "2", " v2 "])
def test_version_spellings(prompt_dir: Path, spelling: str) -> None:
    assert load_prompt("greeter", spelling, directory=prompt_dir).version == "v2"


def test_latest_alias(prompt_dir: Path) -> None:
    assert load_prompt("greeter", "latest", directory=prompt_dir).version == "v10"


def test_list_prompts(prompt_dir: Path) -> None:
    (prompt_dir / "empty-role").mkdir()  # no version files, not a role name: ignored
    (prompt_dir / "greeter" / "notes.md").write_text("not a version")
    (prompt_dir / "greeter" / "v0.md").write_text("v0 is not a version")
    assert list_prompts(directory=prompt_dir) == {
        "greeter": ["v1", "v2", "v10"],
        "plain": ["v1"],
    }


def test_unknown_role_lists_roles(prompt_dir: Path) -> None:
    with pytest.raises(PromptNotFoundError) as info:
        load_prompt("nope", directory=prompt_dir)
    error = info.value
    assert isinstance(error, PlanwrightError)
    assert error.code == "prompt_not_found"
    assert "greeter" in error.message and "plain" in error.message
    assert error.details["available"] == {"greeter": ["v1", "v2", "v10"], "plain": ["v1"]}


def test_unknown_version_lists_versions(prompt_dir: Path) -> None:
    with pytest.raises(PromptNotFoundError) as info:
        load_prompt("greeter", "v3", directory=prompt_dir)
    assert info.value.code == "prompt_not_found"
    assert "v1, v2, v10" in info.value.message


@pytest.mark.parametrize("role", ["../greeter", "greeter/v1", "", "Greeter"])
def test_path_like_roles_are_not_found(prompt_dir: Path, role: str) -> None:
    with pytest.raises(PromptNotFoundError):
        load_prompt(role, directory=prompt_dir)


def test_unknown_role_in_shipped_prompts_lists_them() -> None:
    with pytest.raises(PromptNotFoundError) as info:
        load_prompt("structure_agent")
    for role in SHIPPED_VARIABLES:
        assert role in info.value.message


# --------------------------------------------------------------------------- hashing


def test_hash_is_sha256_prefix_of_raw_bytes(prompt_dir: Path) -> None:
    template = load_prompt("greeter", "v1", directory=prompt_dir)
    raw = (prompt_dir / "greeter" / "v1.md").read_bytes()
    assert template.hash == hashlib.sha256(raw).hexdigest()[:16]
    assert template.label == f"greeter@v1#{template.hash}"
    assert template.metadata() == {
        "prompt_name": "greeter",
        "prompt_version": "v1",
        "prompt_hash": template.hash,
    }


def test_hash_stable_across_copies_and_changes_with_content(tmp_path: Path) -> None:
    first = tmp_path / "a"
    second = tmp_path / "b"
    shutil.copytree(PROMPTS_DIR / "planner", first / "planner")
    shutil.copytree(PROMPTS_DIR / "planner", second / "planner")
    shipped = load_prompt("planner", "v1")
    copy_a = load_prompt("planner", "v1", directory=first)
    copy_b = load_prompt("planner", "v1", directory=second)
    assert shipped.hash == copy_a.hash == copy_b.hash
    assert load_prompt("planner", "v1", directory=first) is copy_a  # cached

    path = second / "planner" / "v1.md"
    stat = path.stat()
    path.write_text(path.read_text(encoding="utf-8") + "\nOne more rule.\n", encoding="utf-8")
    # Keep the mtime too, so only the size tells the cache the file changed.
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    changed = load_prompt("planner", "v1", directory=second)
    assert changed.hash != shipped.hash
    assert changed.text.endswith("One more rule.\n")


def test_edit_with_same_size_is_picked_up_via_mtime(tmp_path: Path) -> None:
    path = _write(tmp_path, "greeter", "v1", "Hello {{name}}.\n")
    before = load_prompt("greeter", directory=tmp_path)
    path.write_text("Howdy {{name}}.\n", encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    after = load_prompt("greeter", directory=tmp_path)
    assert after.hash != before.hash
    assert after.render(name="Ada") == "Howdy Ada.\n"


# --------------------------------------------------------------------------- rendering


def test_missing_variables_are_all_named(prompt_dir: Path) -> None:
    template = load_prompt("greeter", "v2", directory=prompt_dir)
    with pytest.raises(PromptVariableError) as info:
        template.render()
    error = info.value
    assert error.code == "prompt_variable_missing"
    assert "name" in error.message and "place" in error.message
    assert error.details["missing"] == ["name", "place"]


def test_one_missing_variable(prompt_dir: Path) -> None:
    template = load_prompt("greeter", "v2", directory=prompt_dir)
    with pytest.raises(PromptVariableError) as info:
        template.render(name="Ada")
    assert info.value.details["missing"] == ["place"]
    assert "place" in info.value.message


def test_unknown_variable(prompt_dir: Path) -> None:
    template = load_prompt("greeter", "v1", directory=prompt_dir)
    with pytest.raises(PromptVariableError) as info:
        template.render(name="Ada", mood="cheerful")
    assert info.value.code == "prompt_variable_unknown"
    assert "mood" in info.value.message
    assert info.value.details["unknown"] == ["mood"]


def test_template_without_variables_rejects_any(prompt_dir: Path) -> None:
    template = load_prompt("plain", directory=prompt_dir)
    assert template.variables == frozenset()
    assert template.render() == "No variables here.\n"
    with pytest.raises(PromptVariableError, match="extra"):
        template.render(extra="x")


def test_non_string_value_is_rejected(prompt_dir: Path) -> None:
    template = load_prompt("greeter", "v1", directory=prompt_dir)
    with pytest.raises(PromptVariableError) as info:
        template.render(name=None)  # type: ignore[arg-type]
    assert info.value.code == "prompt_variable_invalid"


def test_single_braces_are_untouched(tmp_path: Path) -> None:
    js = (
        "fn(state => { state.ids = state.data.map(p => ({ id: p.id })); return state; });\n"
        "get('/x', { query: { since: $.cursor } });\n"
    )
    _write(tmp_path, "coder", "v1", js + "Step: {{ step }}\n")
    template = load_prompt("coder", directory=tmp_path)
    assert template.variables == frozenset({"step"})
    assert template.render(step="fetch") == js + "Step: fetch\n"


def test_placeholder_whitespace_is_tolerated(tmp_path: Path) -> None:
    _write(tmp_path, "spaced", "v1", "[{{x}}|{{ x }}|{{  x\t}}]")
    assert load_prompt("spaced", directory=tmp_path).render(x="1") == "[1|1|1]"


def test_values_are_not_expanded_again(prompt_dir: Path) -> None:
    template = load_prompt("greeter", "v2", directory=prompt_dir)
    rendered = template.render(name="{{place}}", place="Lagos")
    assert rendered == "Hi {{place}}, from Lagos.\n"


@pytest.mark.parametrize("text", ["Hi {{ step-key }}", "Hi {{name", "Hi {{ 1st }}"])
def test_malformed_placeholder_is_invalid(tmp_path: Path, text: str) -> None:
    _write(tmp_path, "broken", "v1", text)
    with pytest.raises(PromptError) as info:
        load_prompt("broken", directory=tmp_path)
    assert info.value.code == "prompt_invalid"


def test_template_is_frozen(prompt_dir: Path) -> None:
    template = load_prompt("greeter", directory=prompt_dir)
    with pytest.raises(AttributeError):
        template.text = "changed"  # type: ignore[misc]


# --------------------------------------------------------------------------- shipped prompts


def test_shipped_roles_and_versions() -> None:
    shipped = list_prompts()
    assert set(shipped) == set(SHIPPED_VARIABLES)
    for versions in shipped.values():
        assert "v1" in versions


@pytest.mark.parametrize("role", sorted(SHIPPED_VARIABLES))
def test_shipped_template_renders_with_documented_variables(role: str) -> None:
    template = load_prompt(role)
    assert isinstance(template, PromptTemplate)
    assert template.variables == SHIPPED_VARIABLES[role]
    values = {name: f"<value of {name}>" for name in template.variables}
    rendered = template.render(**values)
    assert "{{" not in rendered and "}}" not in rendered
    for value in values.values():
        assert value in rendered
    assert len(template.hash) == 16


def test_planner_system_prompt_carries_key_rules() -> None:
    text = load_prompt("planner").text
    lowered = text.lower()
    for concept in (
        "js_expression",
        "on_job_failure",
        "on_job_success",
        "always",
        "webhook",
        "cron",
        "disabled",
        "exactly one",
        "cycle",
        "call_job_code_agent",
        "inspect_job_code",
        "search_documentation",
        "in parallel",
        "never invent ids",
        "empty code",
        "read-only",
        "ask",
        "yaml",
        "structure before code",
        "confirm",
        "not an instruction",
        "all of them",
        "validation errors",
    ):
        assert concept in lowered, concept
    # Every tool the planner can call is named in its prompt.
    for name in TOOLS:
        assert f"`{name}`" in text, name


def test_planner_system_prompt_has_no_per_turn_data() -> None:
    template = load_prompt("planner")
    assert template.variables == {"adaptors"}
    lines = template.text.count("\n")
    assert 100 <= lines <= 200


def test_planner_user_puts_the_message_last() -> None:
    rendered = load_prompt("planner_user").render(
        structure="STRUCTURE",
        page_context="PAGE",
        errors="",
        mode="editing",
        message="MESSAGE",
    )
    order = [rendered.index(marker) for marker in ("STRUCTURE", "PAGE", "editing", "MESSAGE")]
    assert order == sorted(order)
    tail = rendered[rendered.index("MESSAGE") :]
    assert tail.strip() == "MESSAGE\n</user_message>"


def test_router_prompt_names_both_destinations() -> None:
    text = load_prompt("router").text
    for concept in ("`route`", "`planner`", "`job_code`", "job_key", "confidence"):
        assert concept in text, concept


def test_job_code_prompt_rules_and_example_is_valid_openfn_code() -> None:
    text = load_prompt("job_code").text
    for concept in ("edit_job_code", "replace", "rewrite", "old_code", "import", "await", "$."):
        assert concept in text, concept
    examples = re.findall(r"```js\n(.*?)```", text, flags=re.DOTALL)
    assert examples
    for example in examples:
        assert check_job_code(example) == []


def test_planner_prompt_guards_js_branches_for_failed_steps() -> None:
    """OpenFn checks js_expression edges also after a failure: the prompt says so, shows
    the runtime's own success guard and never negates the whole guarded expression."""
    text = load_prompt("planner").text
    assert "also when its source step failed" in text
    assert "!state.errors?.[upstreamStepId] && (X)" in text
    assert "never `!(guard && X)`" in text
    assert "webhook_response_config" in text
