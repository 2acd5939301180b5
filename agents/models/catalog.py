"""Claude model ids: the defaults per role, and the start-up check of configured ids.

The installed ``anthropic`` SDK is the source: its ``Model`` literal lists the
ids it knows, and its deprecation table gives each deprecated id's end-of-life
date. An id outside that list, or past its end of life, would only fail as a
404 on a turn's first call; :func:`check_model_ids` makes it an error when the
models are built (service start-up, ``planwright eval run``).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import typing
from collections.abc import Mapping

import anthropic.types
from anthropic.resources.messages.messages import DEPRECATED_MODELS

from agents.models.base import ModelError, ModelRole

__all__ = ["DEFAULT_MODEL_IDS", "UnknownModelError", "check_model_ids", "sdk_model_ids"]

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


def check_model_ids(ids: Mapping[ModelRole, str], today: dt.date | None = None) -> None:
    """Raise :class:`UnknownModelError` for any id the API would answer 404.

    A deprecated id that still works is logged as a warning with its date.
    """
    known = sdk_model_ids()
    day = today or dt.date.today()
    for role, model_id in ids.items():
        eol = end_of_life(model_id)
        if model_id not in known or (eol is not None and day >= eol):
            why = f"retired on {eol:%Y-%m-%d}" if model_id in known else "not a known model id"
            current = ", ".join(i for i in known if not end_of_life(i))
            raise UnknownModelError(
                f"the {role} model {model_id!r} is {why}; set PLANWRIGHT_{role.upper()}_MODEL "
                f"to a current id ({current})",
                role=role,
                model=model_id,
            )
        if eol is not None:
            logger.warning("the %s model %s retires on %s", role, model_id, eol.isoformat())
