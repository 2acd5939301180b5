"""Pure functions over OpenFn job code (JavaScript source strings).

- ``parse``: the public types and the tree-sitter plumbing;
- ``syntax``: syntax errors, sharpened by bracket matching;
- ``lint``: the OpenFn rules and :func:`check_job_code` / :func:`format_problems`;
- ``operations``: the calls a body makes must exist in its step's adaptor;
- ``apply``: the ``edit_job_code`` tool's edits (:func:`apply_code_edits`);
- ``body``: small questions (:func:`has_code`, :func:`body_line_count`,
  :func:`top_level_operations`);
- ``stitch``: writing a checked body into a document.
"""

from tools.jobcode.apply import apply_code_edits
from tools.jobcode.body import body_line_count, has_code, top_level_operations
from tools.jobcode.lint import check_job_code, format_problems, problems_error_code
from tools.jobcode.parse import STANDARD_EMPTY_BODY, CodeEdit, CodeProblem

__all__ = [
    "STANDARD_EMPTY_BODY",
    "CodeEdit",
    "CodeProblem",
    "apply_code_edits",
    "body_line_count",
    "check_job_code",
    "format_problems",
    "has_code",
    "problems_error_code",
    "top_level_operations",
]
