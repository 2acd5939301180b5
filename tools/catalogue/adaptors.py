"""The OpenFn adaptor catalogue: which adaptors exist and what functions they offer.

Loaded from ``tools/catalogue/data/adaptors.json``, which
``scripts/generate_catalogue.py`` generates (``make catalogue``) from
``data/adaptors.facts.json`` (versions, exports, function, parameter and namespace
names from OpenFn's adaptors repository) and ``data/descriptions.json`` (our own
descriptions). Nothing here is written by hand.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tools.catalogue.names import adaptor_short_name
from tools.errors import PlanwrightError

DEFAULT_CATALOGUE_PATH = Path(__file__).resolve().parent / "data" / "adaptors.json"
PACKAGE_PREFIX = "@openfn/language-"

_PACKAGE_NAME = r"^@openfn/language-[a-z0-9][a-z0-9-]*$"
_FUNCTION_NAME = r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$"
_PARAM_NAME = re.compile(r"^(\.\.\.)?[A-Za-z_$][\w$]*$")


class CatalogueError(PlanwrightError):
    """The adaptor catalogue file is missing or malformed."""

    code = "invalid_catalogue"


# --------------------------------------------------------------------------- file schema


class _FunctionModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_FUNCTION_NAME)
    params: list[str] | None
    """None: the facts do not give the parameters (namespace members)."""
    description: str = Field(min_length=1, max_length=300)

    @field_validator("params")
    @classmethod
    def _params_are_names(cls, params: list[str] | None) -> list[str] | None:
        if params is None:
            return None
        bad = [p for p in params if not _PARAM_NAME.match(p)]
        if bad:
            raise ValueError(f"invalid parameter names {bad}")
        if len(set(params)) != len(params):
            raise ValueError(f"duplicate parameter names in {params}")
        return params


class _AdaptorModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_PACKAGE_NAME)
    label: str | None = None
    version: str = Field(pattern=r"^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$")
    installed: str | None = Field(None, pattern=r"^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$")
    """The version test runs install here (agents/testrun/node/package.json); None: they
    cannot run this adaptor."""
    description: str = Field(min_length=1, max_length=300)
    functions: list[_FunctionModel]
    exports: list[str] = Field(default_factory=list)
    """Every top-level name the package exports (language-common's re-exports too)."""
    namespaces: dict[str, list[str]] = Field(default_factory=dict)
    """The package's own namespaces and their members (``collections``: get, set, ...)."""

    @field_validator("functions")
    @classmethod
    def _unique_functions(cls, functions: list[_FunctionModel]) -> list[_FunctionModel]:
        names = [f.name for f in functions]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate function names {dupes}")
        return functions


class _CatalogueModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[2] = 2
    facts: dict[str, str | None] = Field(default_factory=dict)
    """Where the facts come from (source, commit, date)."""
    adaptors: list[_AdaptorModel] = Field(min_length=1)

    @field_validator("adaptors")
    @classmethod
    def _unique_adaptors(cls, adaptors: list[_AdaptorModel]) -> list[_AdaptorModel]:
        names = [a.name for a in adaptors]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate adaptor names {dupes}")
        return adaptors


# --------------------------------------------------------------------------- public types


@dataclass(frozen=True)
class AdaptorFunction:
    name: str
    params: tuple[str, ...]
    description: str
    params_known: bool = True
    """False where the facts name the function but not its parameters (namespace members);
    ``params`` is then empty."""

    @property
    def signature(self) -> str:
        """``get(path, options)``; ``collections.set(...)`` when the parameters are unknown."""
        return f"{self.name}({', '.join(self.params) if self.params_known else '...'})"


@dataclass(frozen=True)
class Adaptor:
    name: str
    version: str
    description: str
    functions: tuple[AdaptorFunction, ...]
    exports: frozenset[str] = frozenset()
    """Top-level names the package exports, language-common's re-exports included."""
    namespaces: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """The package's own namespaces and their members."""
    label: str | None = None
    installed: str | None = None
    """The version test runs install here; None when they cannot run this adaptor."""

    @property
    def pinned(self) -> str:
        """``@openfn/language-http@7.3.2``: the package at the facts' current version."""
        return f"{self.name}@{self.version}"

    @property
    def exports_known(self) -> bool:
        """Whether the facts list what the package exports. For a few packages
        (language-fhir-4, -gemini, ...) they list only documented functions, so
        other flat calls can be neither confirmed nor refused."""
        return bool(self.exports or self.namespaces)

    @property
    def short_name(self) -> str:
        """``http`` for ``@openfn/language-http``."""
        return adaptor_short_name(self.name)

    def function(self, name: str) -> AdaptorFunction | None:
        """The function called ``name`` (exact match), if the adaptor has one."""
        return next((f for f in self.functions if f.name == name), None)

    def has_call(self, name: str) -> bool:
        """Whether job code for this adaptor can call ``name`` (``get``, ``http.post``).

        A flat name must be exported (or documented); ``ns.member`` needs ``member`` in
        the package's own namespace ``ns``. A namespace the package only re-exports
        (language-common's ``dateFns``) is exported but its members are not in the
        facts, so any member of it is accepted; so is any flat name when the facts do
        not list the package's exports (:attr:`exports_known`).
        """
        namespace, dot, member = name.partition(".")
        if not dot:
            return name in self.exports or self.function(name) is not None or not self.exports_known
        if namespace in self.namespaces:
            return member in self.namespaces[namespace]
        return namespace in self.exports

    def call_names(self) -> list[str]:
        """Everything :meth:`has_call` accepts that the facts spell out, sorted."""
        names = set(self.exports) | {f.name for f in self.functions}
        names -= set(self.namespaces)
        for namespace, members in self.namespaces.items():
            names |= {f"{namespace}.{m}" for m in members}
        return sorted(names)

    def suggest_call(self, name: str, n: int = 3) -> list[str]:
        """The calls of this adaptor closest to ``name`` (did-you-mean), best first.

        ``set`` finds ``collections.set``; ``sendMail`` finds nothing it is not like.
        """
        names = self.call_names()
        close = difflib.get_close_matches(name, names, n=n, cutoff=0.6)
        member = name.rpartition(".")[2]
        by_member = sorted(c for c in names if c.rpartition(".")[2] == member and c != name)
        return list(dict.fromkeys([*by_member, *close]))[:n]


def _normalise(name: str) -> str:
    """Lower-case, trimmed, without a trailing ``@version`` (``@latest``, ``@1.2.3``)."""
    name = name.strip().lower()
    at = name.rfind("@")
    if at > 0:
        name = name[:at]
    return name


class AdaptorCatalogue:
    """All known adaptors, keyed by full package name."""

    def __init__(self, adaptors: Iterable[Adaptor]) -> None:
        self.adaptors: dict[str, Adaptor] = {a.name: a for a in adaptors}
        self._lookup: dict[str, str] = {}
        for full in self.adaptors:
            low = full.lower()
            for key in (low, low.removeprefix("@openfn/"), adaptor_short_name(low)):
                self._lookup.setdefault(key, full)

    def __len__(self) -> int:
        return len(self.adaptors)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def get(self, name: str) -> Adaptor | None:
        """Look up by ``@openfn/language-http``, ``language-http`` or ``http``.

        Case-insensitive; a trailing ``@version`` (``@latest``, ``@7.2.10``)
        is ignored.
        """
        full = self._lookup.get(_normalise(name))
        return self.adaptors[full] if full else None

    def names(self) -> list[str]:
        """Full package names, sorted."""
        return sorted(self.adaptors)

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """Full names of the adaptors closest to ``name`` (did-you-mean), best first."""
        query = _normalise(name)
        if not query or n <= 0:
            return []
        scored = []
        for full in self.adaptors:
            low = full.lower()
            keys = (low, low.removeprefix("@openfn/"), adaptor_short_name(low))
            ratio = max(difflib.SequenceMatcher(None, query, key).ratio() for key in keys)
            if ratio >= 0.6:
                scored.append((-ratio, full))
        return [full for _, full in sorted(scored)[:n]]


def _from_model(model: _CatalogueModel) -> AdaptorCatalogue:
    return AdaptorCatalogue(
        Adaptor(
            name=a.name,
            version=a.version,
            description=a.description,
            functions=tuple(
                AdaptorFunction(
                    name=f.name,
                    params=tuple(f.params or ()),
                    description=f.description,
                    params_known=f.params is not None,
                )
                for f in a.functions
            ),
            exports=frozenset(a.exports),
            namespaces={ns: frozenset(members) for ns, members in a.namespaces.items()},
            label=a.label,
            installed=a.installed,
        )
        for a in model.adaptors
    )


def _load(path: Path) -> AdaptorCatalogue:
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CatalogueError(
            f"cannot read adaptor catalogue {path}: {exc}", path=str(path)
        ) from exc
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CatalogueError(
            f"adaptor catalogue {path} is not valid JSON: {exc}", path=str(path)
        ) from exc
    try:
        model = _CatalogueModel.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()[:10]
        )
        raise CatalogueError(
            f"adaptor catalogue {path} is malformed: {problems}", path=str(path)
        ) from exc
    return _from_model(model)


@functools.cache
def _load_default() -> AdaptorCatalogue:
    return _load(DEFAULT_CATALOGUE_PATH)


def load_catalogue(path: Path | None = None) -> AdaptorCatalogue:
    """Load and validate the catalogue; the default file is loaded once and cached.

    Raises ``CatalogueError`` (a ``PlanwrightError``) naming the file and the
    offending fields when the file is unreadable, not JSON, or not shaped right.
    """
    if path is None or Path(path).resolve() == DEFAULT_CATALOGUE_PATH:
        return _load_default()
    return _load(Path(path))
