"""Adaptor specifiers: parse, resolve against the catalogue, keep pins."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tools.errors import ToolInputError

if TYPE_CHECKING:  # adaptors.py imports adaptor_short_name from here
    from tools.catalogue.adaptors import AdaptorCatalogue

_VERSION = re.compile(r"^(latest|\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?)$")


def split_adaptor(spec: str) -> tuple[str, str | None]:
    """``'@openfn/language-http@6.5.1'`` -> ``('@openfn/language-http', '6.5.1')``."""
    spec = spec.strip()
    at = spec.rfind("@")
    if at > 0:
        return spec[:at], spec[at + 1 :]
    return spec, None


def resolve_adaptor(spec: str, catalogue: AdaptorCatalogue, *, current: str | None = None) -> str:
    """The full ``package@version`` for ``spec``.

    Short names (``http``) resolve to the package. Without a version the result
    is pinned to the version the adaptor facts list as current (Lightning pins
    every step, and an ``@latest`` run changes when an adaptor is published) --
    unless ``current`` is a pin of the same package, which is kept: a pinned
    version changes only when the call names a version. ``@latest`` is written
    only when the call asks for it.
    """
    package, version = split_adaptor(spec)
    adaptor = catalogue.get(package)
    if adaptor is None:
        suggestions = catalogue.suggest(package)
        hint = f" Did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        raise ToolInputError(
            f"Unknown adaptor {spec!r}.{hint} Known adaptors: "
            + ", ".join(a.short_name for a in catalogue.adaptors.values())
            + ".",
            code="unknown_adaptor",
        )
    if version is not None and not _VERSION.match(version):
        raise ToolInputError(
            f"Adaptor version {version!r} is not 'latest' or a semantic version like 1.2.3.",
            code="invalid_adaptor_version",
        )
    if version is None and current is not None:
        current_package, current_version = split_adaptor(current)
        if current_package == adaptor.name and current_version:
            version = current_version
    return f"{adaptor.name}@{version or adaptor.version}"


def adaptor_short_name(spec: str) -> str:
    """``http`` for ``@openfn/language-http@6.5.1``, ``@openfn/language-http``,
    ``language-http`` or ``http``: the one short name of an adaptor."""
    package, _ = split_adaptor(spec)
    return package.removeprefix("@openfn/").removeprefix("language-")
