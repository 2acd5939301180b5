"""Unit tests for tools.job_code: syntax check, OpenFn lint, code edits, helpers."""

from __future__ import annotations

import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools.errors import CodeEditError
from tools.jobcode import (
    STANDARD_EMPTY_BODY,
    CodeEdit,
    CodeProblem,
    apply_code_edits,
    body_line_count,
    check_job_code,
    format_problems,
    has_code,
    top_level_operations,
)

# --------------------------------------------------------------------------
# Valid bodies
# --------------------------------------------------------------------------

VALID_BODIES = {
    "empty": "",
    "whitespace": "  \n\n\t\n",
    "standard_empty": STANDARD_EMPTY_BODY,
    "standard_empty_newline": STANDARD_EMPTY_BODY + "\n",
    "only_comments": "// first\n/* block\n   comment */\n// last\n",
    "single_get": "get('Coverage', { query: { patient: $.patientId } });\n",
    "arrow_fn": (
        "fn(state => {\n"
        "  const { data } = state;\n"
        "  state.ids = data.entry.map(e => e.resource.id);\n"
        "  return state;\n"
        "});\n"
    ),
    "template_strings": (
        "get(`Patient/${$.patientId}`);\n"
        "fn(state => {\n"
        "  state.summary = `Patient ${state.data.name?.[0]?.family ?? 'unknown'}\n"
        "  has ${state.data.entry.length} (records) {not code}`;\n"
        "  return state;\n"
        "});\n"
    ),
    "comments_everywhere": (
        "// Pull the referral\n"
        "get('ServiceRequest', {\n"
        "  query: { _id: $.referralId }, // trailing comment\n"
        "  /* inline */ headers: {},\n"
        "});\n"
        "/* done ( not closed in a comment */\n"
    ),
    "chained_then": (
        "get('Coverage', { query: { patient: $.patientId } })\n"
        "  .then(state => {\n"
        "    state.hasCoverage = state.data.total > 0;\n"
        "    return state;\n"
        "  })\n"
        "  .catch((error, state) => {\n"
        "    state.error = error.message;\n"
        "    return state;\n"
        "  });\n"
    ),
    "each_nested": (
        "each(\n"
        "  '$.items[*]',\n"
        "  post('/upsert', state => ({ id: state.data.id, body: state.data }))\n"
        ");\n"
        "each($.patients, fn(state => state));\n"
    ),
    "async_callback": (
        "fn(async state => {\n"
        "  const response = await fetch(`https://example.org/${state.id}`);\n"
        "  state.payload = await response.json();\n"
        "  return state;\n"
        "});\n"
    ),
    "no_semicolons": "get('a')\nfn(s => s)\npost('/b', $.data)\n",
    "namespaced_operation": "collections.get('patients', 'key-1');\n",
    "regex_with_brackets": (
        "fn(state => { state.ok = /^(a|[b{]+$/.test(state.x); return state; });\n"
    ),
    "unicode_strings": (
        "fn(state => {\n"
        "  state.greeting = 'Olá, señor — 你好 🌍';\n"
        '  state.label = "naïve café";\n'
        "  return state;\n"
        "});\n"
    ),
    "trailing_comma_and_empty_statement": "get('a', { x: 1, },);\n;\n",
}


@pytest.mark.parametrize("name", sorted(VALID_BODIES))
def test_valid_bodies_have_no_problems(name: str) -> None:
    assert check_job_code(VALID_BODIES[name]) == []


# --------------------------------------------------------------------------
# Lint rules
# --------------------------------------------------------------------------


def _only(problems: list[CodeProblem]) -> CodeProblem:
    assert len(problems) == 1, problems
    return problems[0]


@pytest.mark.parametrize(
    ("body", "rule", "line", "column"),
    [
        ("get('a');\nimport { get } from '@openfn/language-http';\n", "no_import", 2, 1),
        ("get('a');\nfn(async s => { await import('x'); return s; });\n", "no_import", 2, 23),
        ("fn(s => s);\n\nconst http = require('http');\n", "no_require", 3, 14),
        ("fn(state => {\n  const fs = require('fs');\n  return state;\n});\n", "no_require", 2, 14),
        ("require('lodash');\n", "no_require", 1, 1),
        ("get('a');\nexport default fn(s => s);\n", "no_export", 2, 1),
        ("get('a');\nmodule.exports = fn(s => s);\n", "no_export", 2, 1),
        ("get('a');\n  await get('b');\n", "no_top_level_await", 2, 3),
        ("fn(s => s);\nget(await $.url);\n", "no_top_level_await", 2, 5),
        ("get('a');\nconst x = 1;\n", "top_level_not_operation", 2, 1),
        ("let total = 0;\n", "top_level_not_operation", 1, 1),
        ("get('a');\n\nfunction helper(x) {\n  return x;\n}\n", "top_level_not_operation", 3, 1),
        ("get('a');\nstate.data.items.map(x => x.id);\n", "top_level_not_operation", 2, 1),
        ("console.log('hi');\n", "top_level_not_operation", 1, 1),
        ("get('a');\nif ($.x) { get('b'); }\n", "top_level_not_operation", 2, 1),
        ("get('a');\nstate.x = 1;\n", "top_level_not_operation", 2, 1),
        ("get('a');\n'just a string';\n", "top_level_not_operation", 2, 1),
        ("(() => get('a'))();\n", "top_level_not_operation", 1, 1),
        ("class Foo {}\n", "top_level_not_operation", 1, 1),
    ],
)
def test_each_lint_rule(body: str, rule: str, line: int, column: int) -> None:
    problem = _only(check_job_code(body))
    assert (problem.kind, problem.rule, problem.line, problem.column) == (
        "lint",
        rule,
        line,
        column,
    )
    assert problem.message


def test_lint_messages_say_what_to_do() -> None:
    decl = _only(check_job_code("const x = 1;"))
    assert "`const x`" in decl.message
    assert "fn(state =>" in decl.message
    func = _only(check_job_code("function helper() {}"))
    assert "`helper`" in func.message
    imp = _only(check_job_code("import x from 'y';"))
    assert "remove" in imp.message


def test_one_problem_per_statement_for_require_in_declaration() -> None:
    # `const x = require(...)` is reported once, as no_require, not also as a declaration.
    assert [p.rule for p in check_job_code("const x = require('x');")] == ["no_require"]


def test_top_level_await_reported_once() -> None:
    assert [p.rule for p in check_job_code("await get('a');")] == ["no_top_level_await"]


def test_await_in_non_async_callback_is_a_syntax_error() -> None:
    problem = _only(check_job_code("fn(state => {\n  await get('x');\n  return state;\n});"))
    assert (problem.kind, problem.rule, problem.line, problem.column) == (
        "syntax",
        "syntax_error",
        2,
        3,
    )
    assert "async" in problem.message


def test_multiple_violations_sorted_by_position() -> None:
    body = "const a = 1;\nimport b from 'b';\nget('ok');\nexport const c = 2;\n"
    problems = check_job_code(body)
    assert [(p.rule, p.line) for p in problems] == [
        ("top_level_not_operation", 1),
        ("no_import", 2),
        ("no_export", 4),
    ]
    assert problems == sorted(problems, key=lambda p: (p.line, p.column))


# --------------------------------------------------------------------------
# Syntax errors
# --------------------------------------------------------------------------


def _syntax(body: str) -> list[CodeProblem]:
    problems = check_job_code(body)
    assert problems, body
    assert all(p.kind == "syntax" for p in problems), problems
    return problems


def test_unclosed_paren_at_end_points_at_the_opener() -> None:
    problem = _only(_syntax("get('a');\nfn(state => state\n"))
    assert (problem.rule, problem.line, problem.column) == ("missing_token", 2, 3)
    assert "'(' is never closed" in problem.message
    assert "')'" in problem.message


def test_unclosed_paren_mid_body_names_the_opener() -> None:
    body = "fn(state => state.data.map(x => x.id);\nget('b');\n"
    problem = _only(_syntax(body))
    assert (problem.rule, problem.line, problem.column) == ("missing_token", 1, 38)
    assert "opened at line 1, col 3" in problem.message


def test_unclosed_brace_in_callback() -> None:
    body = "fn(state => {\n  state.x = 1;\n  return state;\n);\nget('a');\n"
    problem = _only(_syntax(body))
    assert (problem.rule, problem.line, problem.column) == ("missing_token", 3, 16)
    assert problem.message.startswith("missing '}'")
    assert "'{' opened at line 1, col 13" in problem.message


def test_unclosed_object_brace() -> None:
    problem = _only(_syntax("get('a', { query: { patient: $.patientId } );"))
    assert (problem.rule, problem.line) == ("missing_token", 1)
    assert "'{' opened at line 1, col 10" in problem.message


def test_unclosed_brace_at_end_of_body() -> None:
    problems = _syntax("get('a');\n\nfn(state => {\n  return state;\n")
    assert [(p.rule, p.line, p.column) for p in problems] == [
        ("missing_token", 3, 3),
        ("missing_token", 3, 13),
    ]


def test_stray_closing_paren() -> None:
    problem = _only(_syntax("get('a')\nget('b'))\nget('c')\n"))
    assert (problem.rule, problem.line, problem.column) == ("syntax_error", 2, 9)
    assert problem.message.startswith("unexpected ')'")


def test_stray_closing_brace() -> None:
    body = "fn(state => {\n  return state;\n});\n}\nget('a');\n"
    problem = _only(_syntax(body))
    assert (problem.rule, problem.line, problem.column) == ("syntax_error", 4, 1)
    assert "unexpected '}'" in problem.message


def test_stray_token() -> None:
    problem = _only(_syntax("get('a');\nfn(state = > state);\n"))
    assert (problem.rule, problem.line, problem.column) == ("syntax_error", 2, 10)
    assert problem.message == "unexpected '='"


def test_garbage_token() -> None:
    problem = _only(_syntax("get('a');\n@@@\n"))
    assert (problem.line, problem.column, problem.message) == (2, 1, "unexpected '@@@'")


def test_missing_comma_between_properties() -> None:
    problem = _only(_syntax("get('x', {a: 1 b: 2});"))
    assert (problem.line, problem.column) == (1, 16)
    assert "b: 2" in problem.message


@pytest.mark.parametrize(
    "body", ["get('a');\nget('x);\n", "get('a');\nget('x);\nfn(s => s);\n", "get('a');\nget('x"]
)
def test_unterminated_string(body: str) -> None:
    problems = [p for p in _syntax(body) if "unterminated string" in p.message]
    assert [(p.line, p.column) for p in problems] == [(2, 5)]


def test_unterminated_template_literal() -> None:
    problems = _syntax("get('a');\nfn(s => `abc);\n")
    assert any(
        (p.line, p.column) == (2, 9) and "unterminated template literal" in p.message
        for p in problems
    ), problems


def test_string_across_lines() -> None:
    problem = _only(_syntax('get("a\nb");'))
    assert (problem.line, problem.column) == (1, 5)
    assert "template literal" in problem.message


def test_unterminated_block_comment() -> None:
    problem = _only(_syntax("get('a');\n/* never closed\n"))
    assert (problem.line, problem.column) == (2, 1)
    assert "*/" in problem.message


def test_mismatched_bracket_in_template_substitution() -> None:
    template, mismatch = _syntax("get(`abc ${x);\n")
    assert (template.line, template.column) == (1, 5)
    assert "unterminated template literal" in template.message
    assert (mismatch.rule, mismatch.line, mismatch.column) == ("syntax_error", 1, 13)
    assert "'${' opened at line 1, col 10" in mismatch.message


def test_missing_expression() -> None:
    problem = _only(_syntax("fn(s => s.a ? 1 : );"))
    assert (problem.rule, problem.line, problem.column) == ("missing_token", 1, 18)


def test_elided_argument() -> None:
    problem = _only(_syntax("get('a',, 1);"))
    assert (problem.rule, problem.column) == ("syntax_error", 9)


def test_syntax_error_columns_count_characters_not_bytes() -> None:
    body = "fn(s => { s.x = 'é—🌍'; return s; }); )\n"
    problem = _only(_syntax(body))
    assert (problem.line, problem.column) == (1, 38)
    assert body.splitlines()[0][problem.column - 1] == ")"


def test_unicode_strings_are_fine() -> None:
    assert check_job_code("get('Ünïcödé 🌍', { q: `名前 ${$.x}` });\n") == []


def test_crlf_line_endings() -> None:
    assert check_job_code("get('a');\r\nfn(s => s);\r\n") == []
    problem = _only(check_job_code("get('a');\r\nconst x = 1;\r\n"))
    assert (problem.line, problem.column) == (2, 1)


def test_deterministic() -> None:
    body = "const a = 1;\nget('x'\nimport b from 'b';\n}}"
    assert check_job_code(body) == check_job_code(body)


def test_large_body() -> None:
    lines = [
        f"fn(state => {{ state.v{i} = 'é {i}'; return state; }}); // step {i}" for i in range(5000)
    ]
    body = "\n".join(lines) + "\n"
    assert check_job_code(body) == []
    assert body_line_count(body) == 5000
    assert len(top_level_operations(body)) == 5000
    broken = body + "fn(state => state\n"
    problem = _only(check_job_code(broken))
    assert (problem.line, problem.column) == (5001, 3)


def test_thread_safe() -> None:
    bodies = ["get('a');", "const x = 1;", "fn(s => s", *VALID_BODIES.values()]
    expected = [check_job_code(b) for b in bodies]
    results: list[list[list[CodeProblem]]] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append([check_job_code(b) for b in bodies * 10][: len(bodies)])
        except BaseException as exc:  # pragma: no cover - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(r == expected for r in results)


# --------------------------------------------------------------------------
# format_problems
# --------------------------------------------------------------------------


def test_format_problems() -> None:
    problems = [
        CodeProblem("syntax", "syntax_error", 3, 5, "unexpected ')'"),
        CodeProblem("lint", "no_import", 1, 1, "`import` is not allowed"),
    ]
    assert format_problems(problems) == (
        "line 3, col 5: syntax error: unexpected ')'\n"
        "line 1, col 1: rule no_import: `import` is not allowed"
    )


def test_format_problems_empty_and_limit() -> None:
    assert format_problems([]) == ""
    many = [CodeProblem("syntax", "syntax_error", i, 1, "x") for i in range(1, 6)]
    text = format_problems(many, limit=2)
    assert text.splitlines() == [
        "line 1, col 1: syntax error: x",
        "line 2, col 1: syntax error: x",
        "... and 3 more problems",
    ]


def test_format_real_problems() -> None:
    text = format_problems(check_job_code("get('a')\nget('b'))\n"))
    assert text.startswith("line 2, col 9: syntax error: unexpected ')'")
    assert "\n" not in text


# --------------------------------------------------------------------------
# apply_code_edits
# --------------------------------------------------------------------------

BODY = "get('a');\nfn(state => state);\n"


def test_rewrite() -> None:
    assert apply_code_edits(BODY, [CodeEdit("rewrite", "post('/x');\n")]) == "post('/x');\n"


def test_rewrite_ignores_old_code() -> None:
    edit = CodeEdit("rewrite", "post('/x');\n", old_code="not there")
    assert apply_code_edits(BODY, [edit]) == "post('/x');\n"


def test_replace() -> None:
    result = apply_code_edits(BODY, [CodeEdit("replace", "get('b')", old_code="get('a')")])
    assert result == "get('b');\nfn(state => state);\n"


def test_replace_with_empty_new_code_deletes() -> None:
    result = apply_code_edits(BODY, [CodeEdit("replace", "", old_code="get('a');\n")])
    assert result == "fn(state => state);\n"


def test_multiple_edits_apply_in_order_to_current_text() -> None:
    edits = [
        CodeEdit("replace", "get('b')", old_code="get('a')"),
        # only exists after the first edit
        CodeEdit("replace", "get('c')", old_code="get('b')"),
        CodeEdit("replace", "fn(state => ({ ...state, ok: true }))", old_code="fn(state => state)"),
    ]
    assert apply_code_edits(BODY, edits) == "get('c');\nfn(state => ({ ...state, ok: true }));\n"


def test_rewrite_then_replace() -> None:
    edits = [
        CodeEdit("rewrite", "get('x');\nget('y');\n"),
        CodeEdit("replace", "post('y')", old_code="get('y')"),
    ]
    assert apply_code_edits(STANDARD_EMPTY_BODY + "\n", edits) == "get('x');\npost('y');\n"


def test_replace_standard_empty_body() -> None:
    edit = CodeEdit("replace", "get('a');", old_code=STANDARD_EMPTY_BODY)
    assert apply_code_edits(STANDARD_EMPTY_BODY, [edit]) == "get('a');"


def test_no_edits() -> None:
    with pytest.raises(CodeEditError) as info:
        apply_code_edits(BODY, [])
    assert info.value.code == "no_edits"
    assert "the code was not changed" in info.value.message


@pytest.mark.parametrize("old_code", [None, ""])
def test_replace_requires_old_code(old_code: str | None) -> None:
    with pytest.raises(CodeEditError) as info:
        apply_code_edits(BODY, [CodeEdit("replace", "x", old_code=old_code)])
    assert info.value.code == "old_code_required"
    assert "the code was not changed" in info.value.message


def test_old_code_not_found() -> None:
    with pytest.raises(CodeEditError) as info:
        apply_code_edits(BODY, [CodeEdit("replace", "x", old_code="get('zzz')")])
    assert info.value.code == "old_code_not_found"
    assert "the code was not changed" in info.value.message


def test_old_code_not_found_hints_at_whitespace() -> None:
    body = "fn(state => {\n    return state;\n});\n"
    with pytest.raises(CodeEditError) as info:
        apply_code_edits(body, [CodeEdit("replace", "x", old_code="\treturn state;")])
    assert info.value.code == "old_code_not_found"
    assert "without its leading/trailing whitespace" in info.value.message
    with pytest.raises(CodeEditError) as info:
        apply_code_edits(body, [CodeEdit("replace", "x", old_code="return state;\n  });")])
    assert "first line matches line 2" in info.value.message


def test_old_code_ambiguous_reports_count() -> None:
    body = "get('a');\nget('a');\nfn(s => s);\nget('a');\n"
    with pytest.raises(CodeEditError) as info:
        apply_code_edits(body, [CodeEdit("replace", "x", old_code="get('a')")])
    assert info.value.code == "old_code_ambiguous"
    assert info.value.details["occurrences"] == 3
    assert "3 times" in info.value.message
    assert "lines 1, 2, 4" in info.value.message
    assert "the code was not changed" in info.value.message


def test_overlapping_occurrences_are_ambiguous() -> None:
    with pytest.raises(CodeEditError) as info:
        apply_code_edits("aaa", [CodeEdit("replace", "b", old_code="aa")])
    assert info.value.code == "old_code_ambiguous"


def test_error_in_later_edit_applies_nothing() -> None:
    body = BODY
    edits = [
        CodeEdit("replace", "get('b')", old_code="get('a')"),
        CodeEdit("replace", "x", old_code="get('a')"),  # gone after edit 1
    ]
    with pytest.raises(CodeEditError) as info:
        apply_code_edits(body, edits)
    assert info.value.code == "old_code_not_found"
    assert "edit 2 of 2" in info.value.message
    assert info.value.details["edit_index"] == 2
    assert body == BODY


def test_as_dict_is_serialisable() -> None:
    with pytest.raises(CodeEditError) as info:
        apply_code_edits("a a", [CodeEdit("replace", "b", old_code="a")])
    data = info.value.as_dict()
    assert data["code"] == "old_code_ambiguous"
    assert data["occurrences"] == 2


@pytest.mark.parametrize(
    ("body", "new_code", "expected"),
    [
        ("get('a');\n", "get('b');", "get('b');\n"),  # body has newline: keep one
        ("get('a');", "get('b');\n", "get('b');"),  # body has none: drop it
        ("get('a');\r\n", "get('b');", "get('b');\r\n"),  # CRLF convention
        ("get('a');\n", "get('b');\n\n", "get('b');\n\n"),  # already ends with newline
        ("", "get('b');\n", "get('b');\n"),  # empty body: no convention to keep
        ("get('a');\n", "", ""),  # empty result stays empty
    ],
)
def test_trailing_newline_convention(body: str, new_code: str, expected: str) -> None:
    assert apply_code_edits(body, [CodeEdit("rewrite", new_code)]) == expected


def test_replace_at_end_keeps_trailing_newline() -> None:
    result = apply_code_edits(BODY, [CodeEdit("replace", "", old_code="fn(state => state);\n")])
    assert result == "get('a');\n"


def test_unicode_edits() -> None:
    body = "fn(state => { state.name = 'José'; return state; });\n"
    result = apply_code_edits(body, [CodeEdit("replace", "'Zoë 🌍'", old_code="'José'")])
    assert result == "fn(state => { state.name = 'Zoë 🌍'; return state; });\n"
    assert check_job_code(result) == []


# --------------------------------------------------------------------------
# has_code / body_line_count / top_level_operations
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [None, "", "   ", "\n\n", STANDARD_EMPTY_BODY, "// a\n  // b\n", "/* a\n\n b */", "<!-- x"],
)
def test_has_code_false(body: str | None) -> None:
    assert has_code(body) is False


@pytest.mark.parametrize(
    "body",
    ["get('a');", "// comment\nfn(s => s);", "/* c */ get('a')", "x", "get('a'"],
)
def test_has_code_true(body: str) -> None:
    assert has_code(body) is True


@pytest.mark.parametrize(
    ("body", "count"),
    [
        ("", 0),
        (STANDARD_EMPTY_BODY, 0),
        ("get('a');", 1),
        ("// intro\n\nget('a');\n\n// middle\nfn(s => s); // trailing\n", 2),
        ("/* multi\n   line */\nget('a');\n/* x */ fn(s => s);\n", 2),
        # lines inside a template literal are code, even if they look like comments
        ("fn(s => `a\n// not a comment\nb`);\n", 3),
        ("get('// not a comment');\n", 1),
        (VALID_BODIES["arrow_fn"], 5),
    ],
)
def test_body_line_count(body: str, count: int) -> None:
    assert body_line_count(body) == count


def test_top_level_operations() -> None:
    body = (
        "// intro\n"
        "get('Coverage', { query: { patient: $.patientId } });\n"
        "fn(state => state);\n"
        "each('$.items[*]', post('/x', state => state.data));\n"
        "get('a').then(s => s).catch(e => e);\n"
        "collections.set('c', 'k', $.v);\n"
        "const x = 1;\n"
        "console.log('x');\n"
    )
    assert top_level_operations(body) == ["get", "fn", "each", "get", "collections.set"]


def test_top_level_operations_empty() -> None:
    assert top_level_operations("") == []
    assert top_level_operations(STANDARD_EMPTY_BODY) == []


# --------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------

_js_alphabet = st.sampled_from(
    [*"getfnach$.()[]{}`'\"\\/;:,=> \n\t*+-!?0123456789é🌍", "${", "//", "/*", "*/"]
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.one_of(st.text(), st.lists(_js_alphabet, max_size=80).map("".join)))
def test_check_job_code_never_raises(text: str) -> None:
    problems = check_job_code(text)
    lines = text.split("\n")
    for problem in problems:
        assert problem.kind in ("syntax", "lint")
        assert 1 <= problem.line <= len(lines)
        assert 1 <= problem.column <= len(lines[problem.line - 1]) + 1
        assert problem.message
    assert problems == sorted(problems, key=lambda p: (p.line, p.column))
    format_problems(problems)
    has_code(text)
    body_line_count(text)
    top_level_operations(text)


@settings(max_examples=200, deadline=None)
@given(body=st.text(), new_code=st.text())
def test_rewrite_returns_new_code(body: str, new_code: str) -> None:
    # Same trailing-newline convention (or an empty body): rewrite returns exactly new_code.
    if body and body.endswith("\n") != new_code.endswith("\n"):
        new_code = new_code + "\n" if body.endswith("\n") else new_code.rstrip("\r\n")
    assert apply_code_edits(body, [CodeEdit("rewrite", new_code)]) == new_code


@settings(max_examples=200, deadline=None)
@given(prefix=st.text(), old=st.text(min_size=1), new=st.text(), suffix=st.text())
def test_replace_unique_occurrence(prefix: str, old: str, new: str, suffix: str) -> None:
    body = prefix + old + suffix
    occurrences = sum(1 for i in range(len(body)) if body.startswith(old, i))
    edit = CodeEdit("replace", new, old_code=old)
    if occurrences == 1:
        result = apply_code_edits(body, [edit])
        # equal up to the body's trailing-newline convention
        assert result.rstrip("\r\n") == (prefix + new + suffix).rstrip("\r\n")
    else:
        with pytest.raises(CodeEditError) as info:
            apply_code_edits(body, [edit])
        assert info.value.code == "old_code_ambiguous"
        assert info.value.details["occurrences"] == occurrences
