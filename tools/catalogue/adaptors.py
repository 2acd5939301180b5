"""The OpenFn adaptor catalogue: which adaptors exist and what functions they offer.

Loaded from ``tools/catalogue/data/adaptors.json`` (function and parameter names are
facts from the published packages; descriptions are our own). Entries with
``"source": "package"`` were extracted by ``scripts/extract_adaptor_signatures.py``
from each package's ``ast.json``; ``"manual"`` entries were written by hand and
their versions are the latest we knew of, not checked against the registry.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
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
    params: list[str]
    description: str = Field(min_length=1, max_length=300)

    @field_validator("params")
    @classmethod
    def _params_are_names(cls, params: list[str]) -> list[str]:
        bad = [p for p in params if not _PARAM_NAME.match(p)]
        if bad:
            raise ValueError(f"invalid parameter names {bad}")
        if len(set(params)) != len(params):
            raise ValueError(f"duplicate parameter names in {params}")
        return params


class _AdaptorModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_PACKAGE_NAME)
    version: str = Field(pattern=r"^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$")
    source: Literal["package", "manual"] = "manual"
    description: str = Field(min_length=1, max_length=300)
    functions: list[_FunctionModel] = Field(min_length=1)

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

    schema_version: Literal[1] = 1
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

    @property
    def signature(self) -> str:
        """``get(path, options)``."""
        return f"{self.name}({', '.join(self.params)})"


@dataclass(frozen=True)
class Adaptor:
    name: str
    version: str
    description: str
    functions: tuple[AdaptorFunction, ...]

    @property
    def short_name(self) -> str:
        """``http`` for ``@openfn/language-http``."""
        return adaptor_short_name(self.name)

    def function(self, name: str) -> AdaptorFunction | None:
        """The function called ``name`` (exact match), if the adaptor has one."""
        return next((f for f in self.functions if f.name == name), None)


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
                AdaptorFunction(name=f.name, params=tuple(f.params), description=f.description)
                for f in a.functions
            ),
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
