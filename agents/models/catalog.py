"""Claude model ids: the defaults per role, what is offered, per-provider ids, and the
start-up check of configured ids.

The installed ``anthropic`` SDK (2.10.0) is the one source: its ``Model`` literal
(``anthropic/types/model.py``, the same list as ``types/model_param.py``) lists the
ids it knows, newest first, and ``DEPRECATED_MODELS`` in
``anthropic/resources/messages/messages.py`` gives each deprecated id's end-of-life
date. An id outside that list, or past its end of life, would only fail as a 404 on
a turn's first call; :func:`check_model_ids` makes it an error at start-up (settings
validation, the model factory, ``planwright eval run``), naming the replacement: the
newest current id of the same line (``claude-sonnet-4-5`` -> ``claude-sonnet-5-5``).

Amazon Bedrock and Vertex AI name the same models their own way
(:func:`provider_model_id`, after Anthropic's "model ids and versions" page): from
the 4.6 generation on, Bedrock prefixes ``anthropic.`` (Opus 4.6 alone keeps a
``-v1`` suffix) and Vertex uses the API id; older ids are dated snapshots,
``anthropic.<id>-<date>-v1:0`` on Bedrock and ``<id>@<date>`` on Vertex.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import typing
from collections.abc import Callable, Mapping
from typing import Literal

import anthropic.types
from anthropic.resources.messages.messages import DEPRECATED_MODELS

from agents.models.base import ModelError, ModelRole

__all__ = [
    "DEFAULT_MODEL_IDS",
    "PROVIDERS",
    "Provider",
    "UnknownModelError",
    "api_model_id",
    "check_model_ids",
    "offered_model_ids",
    "provider_model_id",
    "replacement_for",
    "sdk_model_ids",
]

Provider = Literal["anthropic", "bedrock", "vertex"]
PROVIDERS: tuple[Provider, ...] = ("anthropic", "bedrock", "vertex")

today: Callable[[], dt.date] = dt.date.today
"""The clock retirement dates are checked against (tests replace it)."""

logger = logging.getLogger(__name__)

DEFAULT_MODEL_IDS: Mapping[ModelRole, str] = {
    "router": "claude-haiku-4-5",
    "planner": "claude-opus-4-5",
    "job_code": "claude-sonnet-4-6",
}
"""The one source of the default ids (settings and the factory both read it)."""


class UnknownModelError(ModelError):
    """A configured model id the API does not serve: not in the SDK's list, or retired."""

    code = "unknown_model"


def sdk_model_ids() -> tuple[str, ...]:
    """The ids of the installed SDK's ``Model`` literal, in its order (newest first)."""
    return tuple(
        arg
        for member in typing.get_args(anthropic.types.Model)
        for arg in typing.get_args(member)
        if isinstance(arg, str)
    )


def end_of_life(model_id: str) -> dt.date | None:
    """The SDK's end-of-life date of a deprecated id (``"November 30th, 2026"``)."""
    text = DEPRECATED_MODELS.get(model_id)
    if text is None:
        return None
    cleaned = re.sub(r"(\d+)(st|nd|rd|th)", r"\1", text)
    return dt.datetime.strptime(cleaned, "%B %d, %Y").date()


def _snapshot(model_id: str) -> tuple[str, str] | None:
    """``(alias, date)`` of a dated id the SDK lists, or of the alias of one."""
    match = _DATED.fullmatch(model_id)
    if match is not None:
        return match[1], match[2]
    dated = next((i for i in sdk_model_ids() if i.startswith(f"{model_id}-")), None)
    match = _DATED.fullmatch(dated) if dated else None
    return (match[1], match[2]) if match is not None else None


_DATED = re.compile(r"(claude-[a-z]+-\d+-\d+)-(\d{8})")
_BEDROCK_SUFFIX: Mapping[str, str] = {"claude-opus-4-6": "-v1"}
"""Dateless ids Bedrock still suffixes (Opus 4.6 is the last with ``-v1``)."""


def provider_model_id(model_id: str, provider: Provider) -> str:
    """``model_id`` (a Claude API id) as ``provider`` names it."""
    if provider == "anthropic":
        return model_id
    snapshot = _snapshot(model_id)
    if provider == "vertex":
        return f"{snapshot[0]}@{snapshot[1]}" if snapshot else model_id
    if snapshot is not None:
        return f"anthropic.{snapshot[0]}-{snapshot[1]}-v1:0"
    return f"anthropic.{model_id}{_BEDROCK_SUFFIX.get(model_id, '')}"


_PROVIDER_FORM = re.compile(
    r"^(?:(?:global|us|eu|jp|apac|au)\.)?(?:anthropic\.)?(?P<id>claude-[a-z0-9-]+?)"
    r"(?:@(?P<date>\d{8}))?(?:-v\d+(?::\d+)?)?$"
)


def api_model_id(model_id: str) -> str:
    """The Claude API id of a Bedrock or Vertex id (itself for an API id), so usage on any
    provider is priced from one table."""
    match = _PROVIDER_FORM.match(model_id)
    if match is None:
        return model_id
    return f"{match['id']}-{match['date']}" if match["date"] else match["id"]


def _retired(model_id: str, day: dt.date) -> bool:
    eol = end_of_life(model_id)
    return eol is not None and day >= eol


def offered_model_ids(on: dt.date | None = None) -> tuple[str, ...]:
    """The SDK's ids still served on ``on`` (default :data:`today`), newest first."""
    day = on or today()
    return tuple(i for i in sdk_model_ids() if not _retired(i, day))


def replacement_for(model_id: str, on: dt.date | None = None) -> str | None:
    """The newest current, undeprecated id of ``model_id``'s line (opus, sonnet, haiku ...)."""
    line = re.match(r"claude-([a-z]+)", model_id)
    if line is None:
        return None
    day = on or today()
    return next(
        (
            i
            for i in offered_model_ids(day)
            if i.startswith(f"claude-{line[1]}-") and not _DATED.fullmatch(i) and not end_of_life(i)
        ),
        None,
    )


def model_id_problem(role: str, model_id: str, on: dt.date | None = None) -> str | None:
    """Why ``model_id`` cannot be used for ``role`` on ``on``, or ``None``."""
    day = on or today()
    known = sdk_model_ids()
    if model_id in known and not _retired(model_id, day):
        return None
    setting = f"PLANWRIGHT_{role.upper()}_MODEL"
    if model_id in known:
        eol = end_of_life(model_id)
        new = replacement_for(model_id, day)
        instead = f"; its replacement is {new!r}: set {setting}={new}" if new else ""
        return f"the {role} model {model_id!r} was retired on {eol:%Y-%m-%d}{instead}"
    current = ", ".join(i for i in offered_model_ids(day) if not end_of_life(i))
    return (
        f"the {role} model {model_id!r} is not a known model id; set {setting} to one of: {current}"
    )


def check_model_ids(ids: Mapping[ModelRole, str], today: dt.date | None = None) -> None:
    """Raise :class:`UnknownModelError` for any id the API would answer 404.

    A deprecated id that still works is logged as a warning with its date.
    """
    day = today or _today()
    for role, model_id in ids.items():
        problem = model_id_problem(role, model_id, day)
        if problem is not None:
            raise UnknownModelError(problem, role=role, model=model_id)
        eol = end_of_life(model_id)
        if eol is not None:
            logger.warning(
                "the %s model %s retires on %s (replacement: %s)",
                role,
                model_id,
                eol.isoformat(),
                replacement_for(model_id, day),
            )


def _today() -> dt.date:
    return today()
