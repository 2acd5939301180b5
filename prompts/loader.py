"""Versioned prompt files and their loader.

Prompts live next to this module as ``prompts/<role>/v<N>.md`` (``N`` a
positive integer). Each file is a template whose only placeholder syntax is
``{{ name }}`` (whitespace inside the braces is optional, ``name`` is a Python
identifier). Single braces are plain text, so JavaScript examples such as
``fn(state => { return state; })`` are safe in prompts. A ``{{`` that does not
open a valid placeholder makes the file invalid (it is almost always a typo
that would otherwise ship to the model unrendered).

Shipped roles and the variables their templates take:

==============  ==============================================================
role            variables
==============  ==============================================================
router          page_context
planner         adaptors  (system prompt: cached, no per-turn data)
planner_user    structure, page_context, mode, errors, message
job_code        (none: system prompt, cached)
job_code_user   step, adaptor_functions, neighbours, current_code, request,
                problems
project_planner (none: system prompt of plan turns)
project_planner_user  project, plan, mode, message
plan_build      plan  (prepended to planner_user when a plan turn builds a workflow)
==============  ==============================================================

``errors`` and ``problems`` may be empty strings; when not empty they are
complete blocks (a heading line followed by the items).

:class:`PromptTemplate.hash` is the first 16 hex characters of the SHA-256 of
the file's raw bytes: stable across machines and line-ending-sensitive, so any
change to a shipped prompt changes the hash reported with every generation.

Loaded templates are cached by (path, mtime, size): editing a file during
development is picked up by the next :func:`load_prompt` call.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from prompts.delimiters import enclosing_tags, fence
from tools.errors import PlanwrightError

__all__ = [
    "PROMPTS_DIR",
    "PromptError",
    "PromptNotFoundError",
    "PromptTemplate",
    "PromptVariableError",
    "list_prompts",
    "load_prompt",
]

PROMPTS_DIR = Path(__file__).resolve().parent
"""Directory holding the shipped ``<role>/v<N>.md`` files (package data)."""

HASH_LENGTH = 16

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_ROLE = re.compile(r"^[a-z][a-z0-9_]*$")
_VERSION_FILE = re.compile(r"^v([1-9][0-9]*)\.md$")
_VERSION_ARG = re.compile(r"^v?([1-9][0-9]*)$")


class PromptError(PlanwrightError):
    """A prompt file is missing, malformed, or rendered with the wrong variables."""

    code = "prompt_error"


class PromptNotFoundError(PromptError):
    """No prompt file for the requested role or version."""

    code = "prompt_not_found"


class PromptVariableError(PromptError):
    """``render`` got missing (``prompt_variable_missing``), unknown
    (``prompt_variable_unknown``) or non-string (``prompt_variable_invalid``) variables."""

    code = "prompt_variable_missing"


@dataclass(frozen=True)
class PromptTemplate:
    """One versioned prompt file.

    ``name`` is the prompt's name for tracing and prompt management (the role,
    e.g. ``"planner"``); ``version`` is ``"v1"``; ``hash`` is the first 16 hex
    characters of the SHA-256 of the raw file bytes.
    """

    role: str
    version: str
    name: str
    text: str
    hash: str
    variables: frozenset[str]
    path: Path | None = field(default=None, compare=False, repr=False)

    @property
    def version_number(self) -> int:
        """``1`` for ``"v1"`` (Langfuse numbers prompt versions)."""
        return int(self.version.removeprefix("v"))

    @property
    def label(self) -> str:
        """``planner@v1#0123456789abcdef``: a compact reference for logs and traces."""
        return f"{self.name}@{self.version}#{self.hash}"

    def metadata(self) -> dict[str, str]:
        """``{"prompt_name", "prompt_version", "prompt_hash"}`` for trace metadata."""
        return {"prompt_name": self.name, "prompt_version": self.version, "prompt_hash": self.hash}

    def render(self, **variables: str) -> str:
        """Substitute every ``{{ name }}`` placeholder with ``variables[name]``.

        Every placeholder must be given and every given variable must be used;
        values must be strings. Substitution is a single pass, so values may
        themselves contain ``{{ ... }}`` (e.g. a user's message) without being
        expanded. A placeholder that is the whole content of a tag
        (``<user_message>{{message}}</user_message>``) cannot close or reopen that
        tag: see :mod:`prompts.delimiters`.
        """
        self._check(variables)
        fences = enclosing_tags(self.text)
        tags = set(fences.values())  # no fenced value may open or close any of them

        def value(match: re.Match[str]) -> str:
            name = match.group(1)
            return fence(variables[name], *tags) if name in fences else variables[name]

        return _PLACEHOLDER.sub(value, self.text)

    def _check(self, variables: Mapping[str, object]) -> None:
        where = f"prompt {self.name} {self.version}"
        missing = sorted(self.variables - variables.keys())
        unknown = sorted(variables.keys() - self.variables)
        expected = ", ".join(sorted(self.variables)) or "(none)"
        if missing:
            extra = f"; also unknown: {', '.join(unknown)}" if unknown else ""
            raise PromptVariableError(
                f"{where} is missing variable{'s' if len(missing) > 1 else ''} "
                f"{', '.join(missing)}{extra} (it takes: {expected})",
                code="prompt_variable_missing",
                role=self.role,
                version=self.version,
                missing=missing,
                unknown=unknown,
                expected=sorted(self.variables),
            )
        if unknown:
            raise PromptVariableError(
                f"{where} does not use variable{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(unknown)} (it takes: {expected})",
                code="prompt_variable_unknown",
                role=self.role,
                version=self.version,
                unknown=unknown,
                expected=sorted(self.variables),
            )
        invalid = sorted(name for name, value in variables.items() if not isinstance(value, str))
        if invalid:
            raise PromptVariableError(
                f"{where}: variable{'s' if len(invalid) > 1 else ''} {', '.join(invalid)} "
                "must be strings",
                code="prompt_variable_invalid",
                role=self.role,
                version=self.version,
                invalid=invalid,
            )


# ---------------------------------------------------------------------------- discovery


def _versions_in(role_dir: Path) -> list[int]:
    numbers = []
    for entry in role_dir.iterdir():
        match = _VERSION_FILE.match(entry.name)
        if match and entry.is_file():
            numbers.append(int(match.group(1)))
    return sorted(numbers)


def list_prompts(*, directory: Path | None = None) -> dict[str, list[str]]:
    """Every role with at least one version file, mapped to its versions (oldest first)."""
    base = directory if directory is not None else PROMPTS_DIR
    found: dict[str, list[str]] = {}
    if not base.is_dir():
        return found
    for role_dir in sorted(base.iterdir(), key=lambda p: p.name):
        if not role_dir.is_dir() or not _ROLE.match(role_dir.name):
            continue
        numbers = _versions_in(role_dir)
        if numbers:
            found[role_dir.name] = [f"v{n}" for n in numbers]
    return found


def _normalise_version(version: str) -> str | None:
    """``"v2"`` for ``"v2"`` or ``"2"``; ``None`` for ``"latest"``; unchanged otherwise."""
    text = version.strip()
    if text.lower() == "latest":
        return None
    match = _VERSION_ARG.match(text.lower())
    return f"v{int(match.group(1))}" if match else text


def load_prompt(
    role: str, version: str | None = None, *, directory: Path | None = None
) -> PromptTemplate:
    """The prompt for ``role`` at ``version`` (``"v1"``; ``"1"`` and ``"latest"`` are
    accepted too). Without a version, the latest one: the highest ``N`` among
    ``<role>/v<N>.md``. ``directory`` defaults to the shipped prompts.

    Raises :class:`PromptNotFoundError` (listing what exists) for an unknown role or
    version, and :class:`PromptError` (``prompt_invalid``) for a malformed file.
    """
    base = directory if directory is not None else PROMPTS_DIR
    available = list_prompts(directory=base)
    if role not in available:
        roles = ", ".join(available) or "(none)"
        raise PromptNotFoundError(
            f"no prompt for role {role!r}; available roles: {roles}",
            role=role,
            available=available,
        )
    wanted = _normalise_version(version) if version is not None else None
    if wanted is None:
        wanted = available[role][-1]
    elif wanted not in available[role]:
        raise PromptNotFoundError(
            f"prompt {role!r} has no version {version!r}; available versions: "
            f"{', '.join(available[role])}",
            role=role,
            version=version,
            available=available,
        )
    path = base / role / f"{wanted}.md"
    stat = path.stat()
    return _load_file(str(path), role, wanted, stat.st_mtime_ns, stat.st_size)


@functools.cache
def _load_file(path: str, role: str, version: str, mtime_ns: int, size: int) -> PromptTemplate:
    raw = Path(path).read_bytes()
    where = f"prompt {role} {version} ({path})"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PromptError(
            f"{where} is not valid UTF-8: {exc}", code="prompt_invalid", role=role, version=version
        ) from exc
    variables = frozenset(match.group(1) for match in _PLACEHOLDER.finditer(text))
    stray = _PLACEHOLDER.sub("", text).find("{{")
    if stray != -1:
        snippet = _PLACEHOLDER.sub("", text)[stray : stray + 40].splitlines()[0]
        raise PromptError(
            f"{where} has a malformed placeholder near {snippet!r}: placeholders are "
            "{{ name }} with a Python identifier as the name",
            code="prompt_invalid",
            role=role,
            version=version,
        )
    return PromptTemplate(
        role=role,
        version=version,
        name=role,
        text=text,
        hash=hashlib.sha256(raw).hexdigest()[:HASH_LENGTH],
        variables=variables,
        path=Path(path),
    )
