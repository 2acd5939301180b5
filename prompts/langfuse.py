"""Prompt management in Langfuse, with the local files as the source of truth and fallback.

- :func:`push_prompts` uploads every ``prompts/<role>/v<N>.md`` as a text prompt
  named after the role, labelled ``v<N>`` (Langfuse moves its reserved ``latest``
  label to the newest version itself, so versions are pushed oldest first).
  A version whose label already points at identical content is left alone, so
  pushing twice creates nothing.
- :class:`LangfusePromptSource` loads a prompt by label at run time (``v2`` for
  version ``v2``; ``latest`` when no version is asked for) and falls back to the
  local file when Langfuse is unreachable or has no such label. Either way the
  result is a :class:`~prompts.PromptTemplate` whose ``hash`` is the SHA-256 of
  the text, so the same content has the same hash wherever it came from.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from prompts.loader import HASH_LENGTH, PromptError, PromptTemplate, list_prompts, load_prompt

log = logging.getLogger(__name__)

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_VERSION = re.compile(r"^v[1-9][0-9]*$")

PromptLoader = Callable[[str, "str | None"], PromptTemplate]


def text_hash(text: str) -> str:
    """The loader's hash of a file whose bytes are ``text`` in UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_LENGTH]


def template_from_text(role: str, version: str, text: str) -> PromptTemplate:
    """A :class:`PromptTemplate` from prompt text (e.g. fetched from Langfuse)."""
    if _PLACEHOLDER.sub("", text).find("{{") != -1:
        raise PromptError(
            f"prompt {role} {version} from Langfuse has a malformed placeholder",
            code="prompt_invalid",
            role=role,
            version=version,
        )
    return PromptTemplate(
        role=role,
        version=version,
        name=role,
        text=text,
        hash=text_hash(text),
        variables=frozenset(m.group(1) for m in _PLACEHOLDER.finditer(text)),
        path=None,
    )


def label_for(version: str | None) -> str:
    """``v2`` for ``"v2"``/``"2"``; ``latest`` for ``None``/``"latest"``."""
    if version is None or version.strip().lower() == "latest":
        return "latest"
    text = version.strip().lower()
    return text if text.startswith("v") else f"v{text}"


@dataclass(frozen=True)
class PushResult:
    role: str
    version: str
    hash: str
    status: Literal["created", "unchanged", "would create"]
    langfuse_version: int | None = None


def _current(client: Any, role: str, label: str) -> Any | None:
    from langfuse.api import NotFoundError

    try:
        return client.api.prompts.get(role, label=label)
    except NotFoundError:
        return None


def push_prompts(
    client: Any,
    *,
    roles: Iterable[str] = (),
    directory: Path | None = None,
    dry_run: bool = False,
) -> list[PushResult]:
    """Upload the local prompt versions (oldest first) that Langfuse lacks or holds differently."""
    wanted = set(roles)
    results: list[PushResult] = []
    for role, versions in list_prompts(directory=directory).items():
        if wanted and role not in wanted:
            continue
        for version in versions:
            template = load_prompt(role, version, directory=directory)
            current = _current(client, role, version)
            if current is not None and text_hash(str(current.prompt)) == template.hash:
                results.append(
                    PushResult(role, version, template.hash, "unchanged", current.version)
                )
                continue
            if dry_run:
                results.append(PushResult(role, version, template.hash, "would create"))
                continue
            created = client.create_prompt(
                name=role,
                prompt=template.text,
                labels=[version],
                type="text",
                config={"planwright_version": version, "hash": template.hash},
                commit_message=f"planwright {role} {version} ({template.hash})",
            )
            results.append(
                PushResult(
                    role, version, template.hash, "created", getattr(created, "version", None)
                )
            )
    return results


class LangfusePromptSource:
    """Prompts from Langfuse by label, the local files as fallback.

    ``load`` has the signature of :func:`prompts.load_prompt` (``role, version``).
    ``link(hash)`` returns the Langfuse prompt a template came from (for linking
    generations to prompt versions in traces), or ``None`` for local fallbacks.
    """

    def __init__(
        self,
        client: Any,
        *,
        cache_ttl_seconds: int = 60,
        fallback: PromptLoader = load_prompt,
        retry_after_s: float = 30.0,
    ) -> None:
        self.client = client
        self.cache_ttl_seconds = cache_ttl_seconds
        self.fallback = fallback
        self.retry_after_s = retry_after_s
        self._links: dict[str, Any] = {}
        self._down_until = 0.0

    def load(self, role: str, version: str | None = None) -> PromptTemplate:
        """The prompt from Langfuse by label; the local file if that fails.

        After a failure Langfuse is not asked again for ``retry_after_s`` seconds,
        so an outage costs one slow call, not one per turn.
        """
        label = label_for(version)
        if time.monotonic() < self._down_until:
            return self.fallback(role, version)
        try:
            fetched = self.client.get_prompt(
                role,
                label=label,
                type="text",
                cache_ttl_seconds=self.cache_ttl_seconds,
                max_retries=0,
                fetch_timeout_seconds=3,
            )
            config = fetched.config if isinstance(fetched.config, dict) else {}
            name = str(config.get("planwright_version") or "")
            if not _VERSION.match(name):
                name = label if _VERSION.match(label) else f"v{fetched.version}"
            template = template_from_text(role, name, str(fetched.prompt))
        except Exception as exc:  # unreachable, unknown label, malformed: use the file
            self._down_until = time.monotonic() + self.retry_after_s
            log.warning(
                "prompt %s@%s from Langfuse failed (%s); using the local file", role, label, exc
            )
            return self.fallback(role, version)
        if not getattr(fetched, "is_fallback", False):
            self._links[template.hash] = fetched
        return template

    __call__ = load

    def link(self, prompt_hash: str | None) -> Any | None:
        return self._links.get(prompt_hash) if prompt_hash else None

    def prefetch(self, versions: dict[str, str] | None = None) -> list[PromptTemplate]:
        """Load every shipped role once (fills the SDK cache before the first turn)."""
        versions = versions or {}
        return [self.load(role, versions.get(role)) for role in list_prompts()]
