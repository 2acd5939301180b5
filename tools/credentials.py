"""A project's credentials as OpenFn has them: named, with a schema and the fields that
are not secret. Pure data and rules, no I/O.

A credential in Lightning has a name, an owner (the user whose credential it is), a
schema (the adaptor configuration it fills: ``http``, ``fhir``, ... or ``raw``) and a
body. Planwright keeps everything but the secrets: ``baseUrl`` and the like, so it can
say which steps would fail for want of one. Secrets stay in Lightning, or in the CLI's
credential map (``openfn … --creds``); a field whose name reads as a secret
(``password``, ``token``, ``apiKey``...) or a URL that carries a user and password is
refused, never stored.

Steps name a credential (``Job.credential``); :func:`base_url_warnings` says which
steps call their adaptor with relative paths and have no credential, or one without a
``baseUrl``: OpenFn's CLI fails them with ``UNEXPECTED_RELATIVE_URL``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tools.catalogue.adaptors import AdaptorCatalogue
from tools.catalogue.names import adaptor_short_name, split_adaptor
from tools.document.structure import Structure
from tools.jobcode.urls import relative_path_calls

MAX_CREDENTIALS = 200
MAX_FIELDS = 30
RAW_SCHEMA = "raw"
"""A credential of any shape: fits every adaptor."""

_NAME = r"^[^\r\n\t\x00]{1,200}$"
_SCHEMA = r"^[a-z0-9][a-z0-9-]{0,63}$"
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
# Field names that hold a secret in OpenFn's credential schemas (http's password,
# access_token, dhis2's password, salesforce's securityToken, gmail's apiKey...).
_SECRET_WORDS = re.compile(
    r"pass(word|wd|phrase)?|secret|token|api_?key|private_?key|access_?key|"
    r"client_?secret|auth(orization)?|bearer|cookie|session|pin$|otp|signature|cert",
    re.I,
)
_USERINFO = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/@\s]*:[^/@\s]*@")


_ADDRESS = re.compile(r"(url|uri|endpoint|host)$", re.I)


def secret_field(name: str) -> bool:
    """Whether a field called ``name`` reads as a secret (never stored here); an address
    (``tokenUrl``, ``authHost``) is not one."""
    return bool(_SECRET_WORDS.search(name)) and not _ADDRESS.search(name)


class Credential(BaseModel):
    """One named credential of a project, without its secrets."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    name: str = Field(
        pattern=_NAME, description="The credential's name, as steps and Lightning name it."
    )
    credential_schema: str = Field(
        RAW_SCHEMA,
        alias="schema",
        pattern=_SCHEMA,
        description="The adaptor configuration it fills: 'http', 'fhir', ... or 'raw' (any).",
    )
    owner: str | None = Field(
        None,
        max_length=254,
        pattern=_NAME,
        description="The Lightning user who owns it (their email): Lightning finds a "
        "credential by owner and name.",
    )
    fields: dict[str, str | int | float | bool] = Field(
        default_factory=dict,
        description="Its fields that are not secret, e.g. {'baseUrl': 'https://payer.example'}.",
    )

    @field_validator("fields")
    @classmethod
    def _no_secrets(
        cls, fields: dict[str, str | int | float | bool]
    ) -> dict[str, str | int | float | bool]:
        if len(fields) > MAX_FIELDS:
            raise ValueError(f"at most {MAX_FIELDS} fields")
        for key, value in fields.items():
            if not _FIELD.match(key):
                raise ValueError(f"field name {key!r} must be letters, digits or '_'")
            if secret_field(key):
                raise ValueError(
                    f"field {key!r} reads as a secret: secrets stay in Lightning or the CLI's "
                    "credential file, never here"
                )
            if isinstance(value, str) and (_USERINFO.match(value) or len(value) > 2000):
                raise ValueError(
                    f"field {key!r} holds a URL with a user and password (or is over 2000 "
                    "characters): secrets are never stored here"
                )
        return fields

    @property
    def base_url(self) -> str | None:
        value = self.fields.get("baseUrl")
        return value if isinstance(value, str) and value.strip() else None

    def fits(self, adaptor: str) -> bool:
        """Whether a step on ``adaptor`` can use it (a ``raw`` credential fits any)."""
        return self.credential_schema in (RAW_SCHEMA, adaptor_short_name(adaptor))

    def lightning_key(self) -> str:
        """How Lightning's ``project.yaml`` keys it (``owner|name``, as ``@openfn/project``
        writes it); the bare name when it has no owner."""
        return f"{self.owner}|{self.name}" if self.owner else self.name


class ProjectCredentials(BaseModel):
    """Every credential of a project (``PUT /v1/projects/{id}/credentials``)."""

    model_config = ConfigDict(extra="forbid")

    credentials: list[Credential] = Field(default_factory=list, max_length=MAX_CREDENTIALS)

    @model_validator(mode="after")
    def _unique(self) -> ProjectCredentials:
        names = [c.name for c in self.credentials]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"credential names must be unique: {', '.join(dupes)}")
        return self

    def by_name(self) -> dict[str, Credential]:
        return {c.name: c for c in self.credentials}

    def dump(self) -> list[dict[str, Any]]:
        return [c.model_dump(by_alias=True, exclude_none=True) for c in self.credentials]


def base_url_warnings(
    structure: Structure,
    catalogue: AdaptorCatalogue,
    credentials: Mapping[str, Credential] | None = None,
) -> dict[str, str]:
    """Per step key, why it would fail in OpenFn for want of a ``baseUrl``: it calls its
    adaptor with relative paths and has no credential, or (``credentials`` given) one
    without a ``baseUrl``, or one the project does not hold."""
    warnings: dict[str, str] = {}
    for key, job in structure.jobs.items():
        calls = relative_path_calls(job.body, catalogue.get(split_adaptor(job.adaptor)[0]))
        if not calls:
            continue
        shown = ", ".join(calls[:3]) + (", ..." if len(calls) > 3 else "")
        what = f"Step {job.name!r} calls {shown} with a relative path"
        if not job.credential:
            warnings[key] = (
                f"{what} and has no credential: OpenFn fails it (UNEXPECTED_RELATIVE_URL) "
                "unless a credential gives it a baseUrl."
            )
            continue
        if credentials is None:
            continue
        credential = credentials.get(job.credential)
        if credential is None:
            warnings[key] = (
                f"{what}; its credential {job.credential!r} is not one of the project's, so "
                "nothing here says it has a baseUrl."
            )
        elif credential.base_url is None:
            warnings[key] = (
                f"{what}, but its credential {job.credential!r} has no baseUrl: OpenFn fails it."
            )
    return warnings
