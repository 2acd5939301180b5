"""A project's credentials as OpenFn has them: named, with a schema and the fields that
are not secret. Pure data and rules, no I/O.

A credential in Lightning has a name, an owner (the user whose credential it is), a
schema (the adaptor configuration it fills: ``http``, ``fhir``, ... or ``raw``) and a
body. Planwright keeps everything but the secrets: ``baseUrl`` and the like, so it can
say which steps would fail for want of one. Secrets stay in Lightning, or in the CLI's
credential map (``openfn … --creds``); a field whose name reads as a secret, word by
word (``password``, ``pwd``, ``token``, ``apiKey``, ``key``...: :func:`secret_field`),
a URL that carries a user or a secret parameter, or a private key is refused, never
stored (:func:`secret_in_value`). A schema is an adaptor's short name or ``raw``; an
owner is an email; a name has no ``|`` (Lightning keys a credential ``owner|name``).

Steps name a credential (``Job.credential``); :func:`base_url_warnings` says which
steps call their adaptor with relative paths and have no credential, or one without a
``baseUrl``: OpenFn's CLI fails them with ``UNEXPECTED_RELATIVE_URL``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import unquote_plus

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from tools.catalogue.adaptors import AdaptorCatalogue, load_catalogue
from tools.catalogue.names import adaptor_short_name, split_adaptor
from tools.document.structure import Structure
from tools.jobcode.urls import relative_path_calls

MAX_CREDENTIALS = 200
MAX_FIELDS = 30
RAW_SCHEMA = "raw"
"""A credential of any shape: fits every adaptor."""
STORED = "stored"
"""Validation context for credentials read back from the store: the rules for what may
be written are not applied again, so a row kept under older rules still reads."""

_NAME = r"^[^\r\n\t\x00]{1,200}$"
_SCHEMA = r"^[a-z0-9][a-z0-9-]{0,63}$"
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
# An owner is the Lightning user's email: one "@", no spaces, nothing that would split
# the ``owner|name`` key Lightning files a credential under.
_EMAIL = re.compile(r"^[^\s@|,;:<>()\[\]\\\"]+@[^\s@|,;:<>()\[\]\\\"]+\.[^\s@|,;:<>()\[\]\\\".]+$")

# A field name's words: ``apiKey``, ``api_key``, ``API-KEY`` and ``x-api-key`` all read
# as "api", "key".
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# Words that name a secret wherever they stand: the secret fields of OpenFn's adaptor
# configuration schemas (password, access_token, apiSecret, securityToken, dhis2's
# pat, mpesa's pass_key, fhir-4's authorization ...) and the usual others.
_SECRET_WORDS = frozenset(
    {
        "password", "passwd", "passphrase", "passcode", "passkey", "pass", "pwd", "pw",
        "pin", "otp", "totp", "secret", "secrets", "token", "tokens", "pat", "jwt",
        "bearer", "auth", "authorization", "cookie", "cookies", "signature", "sig",
        "credential", "credentials", "apikey", "privatekey", "secretkey", "accesskey",
        "sessionid",
    }
)  # fmt: skip
# One lower-case word that ends like a secret: ``accesstoken``, ``clientsecret``.
_SECRET_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "apikey", "privatekey")
# A key is a secret (apiKey, accountKey, merchantKey, private_key, key) unless public.
_KEYS = frozenset({"key", "keys"})
_PUBLIC = frozenset({"public"})
# A session's id is (sessionId), its other settings are not (sessionHint).
_SECRET_PAIRS = frozenset({("session", "id")})
# A last word that makes the name about a secret rather than the secret: where to get
# it (tokenUrl, auth_uri) or how it is used (authType, tokenExpiry).
_ABOUT = frozenset(
    {
        "url", "uri", "endpoint", "host", "hostname", "path", "domain", "server", "port",
        "type", "mode", "method", "scheme", "kind", "flow", "provider", "hint", "format",
        "expiry", "expires", "ttl", "lifetime", "length", "enabled", "required",
    }
)  # fmt: skip
_ADDRESS = re.compile(r"(url|uri|endpoint|host)$", re.I)  # tokenurl: one word

# A URL with someone in it (``https://user:pass@host``, or a token as the user), and a
# parameter of a query or fragment (``?api_key=``, ``#access_token=``).
_USERINFO = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s]+@")
_PARAMETER = re.compile(r"[?&;#](?P<name>[^=&;#?\s]{1,200})=")
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")
MAX_VALUE_CHARS = 2000


def secret_field(name: str) -> bool:
    """Whether a field called ``name`` reads as a secret (never stored here), word by
    word in any spelling (camelCase, snake_case, kebab-case): ``pwd``, ``apiKey``,
    ``client_secret``, ``X-Amz-Signature``, ``accesstoken``. A name about a secret
    (``tokenUrl``, ``authType``) and a public key are not secrets."""
    words = [w.lower() for w in _WORDS.findall(name)]
    if not words or words[-1] in _ABOUT or _ADDRESS.search(name):
        return False
    if any(w in _SECRET_WORDS or w.endswith(_SECRET_ENDINGS) for w in words):
        return True
    if any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words)):
        return True
    return any(w in _KEYS and (i == 0 or words[i - 1] not in _PUBLIC) for i, w in enumerate(words))


def secret_in_value(value: str) -> str | None:
    """Why a field's text carries a secret, or ``None``: a URL with a user (and
    password) in it, a URL whose query or fragment has a secret parameter, a private
    key."""
    if _USERINFO.match(value.strip()):
        return "holds a URL with a user and password (or a token as the user) in it"
    for match in _PARAMETER.finditer(value):
        if secret_field(unquote_plus(match["name"])):
            return f"holds a URL whose {match['name']!r} parameter reads as a secret"
    if _PRIVATE_KEY.search(value):
        return "holds a private key"
    return None


@lru_cache(maxsize=1)
def known_schemas() -> frozenset[str]:
    """The schemas a credential may have: ``raw`` and every adaptor the catalogue lists
    (by short name, ``http``), as Lightning names an adaptor's configuration schema."""
    return frozenset({RAW_SCHEMA, *(adaptor_short_name(n) for n in load_catalogue().names())})


def _stored(info: ValidationInfo) -> bool:
    return isinstance(info.context, Mapping) and bool(info.context.get(STORED))


class Credential(BaseModel):
    """One named credential of a project, without its secrets."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    name: str = Field(
        pattern=_NAME,
        description="The credential's name, as steps and Lightning name it (no '|': "
        "Lightning keys it 'owner|name').",
    )
    credential_schema: str = Field(
        RAW_SCHEMA,
        alias="schema",
        pattern=_SCHEMA,
        description="The adaptor configuration it fills: an adaptor's short name ('http', "
        "'fhir', ...) or 'raw' (any).",
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

    @field_validator("name")
    @classmethod
    def _no_bar(cls, name: str, info: ValidationInfo) -> str:
        if "|" in name and not _stored(info):
            raise ValueError("a credential's name has no '|': Lightning keys it 'owner|name'")
        return name

    @field_validator("credential_schema")
    @classmethod
    def _known_schema(cls, schema: str, info: ValidationInfo) -> str:
        if schema in known_schemas() or _stored(info):
            return schema
        near = [adaptor_short_name(n) for n in load_catalogue().suggest(schema)]
        hint = f" (did you mean {' or '.join(repr(n) for n in near)}?)" if near else ""
        raise ValueError(
            f"schema {schema!r} is no adaptor's configuration{hint}: give an adaptor's "
            f"short name, such as 'http', or {RAW_SCHEMA!r} for a credential of any shape"
        )

    @field_validator("owner")
    @classmethod
    def _email(cls, owner: str | None, info: ValidationInfo) -> str | None:
        if owner is None or _EMAIL.match(owner) or _stored(info):
            return owner
        raise ValueError("the owner is the Lightning user's email, such as 'ana@clinic.example'")

    @field_validator("fields")
    @classmethod
    def _no_secrets(
        cls, fields: dict[str, str | int | float | bool], info: ValidationInfo
    ) -> dict[str, str | int | float | bool]:
        if len(fields) > MAX_FIELDS:
            raise ValueError(f"at most {MAX_FIELDS} fields")
        for key, value in fields.items():
            if not _FIELD.match(key):
                raise ValueError(f"field name {key!r} must be letters, digits or '_'")
            if _stored(info):
                continue
            # true or false holds no secret: allowSelfSignedCert, basicAuth (primero's)
            if secret_field(key) and not isinstance(value, bool):
                raise ValueError(
                    f"field {key!r} reads as a secret: secrets stay in Lightning or the CLI's "
                    "credential file, never here"
                )
            if not isinstance(value, str):
                continue
            if len(value) > MAX_VALUE_CHARS:
                raise ValueError(f"field {key!r} is over {MAX_VALUE_CHARS} characters")
            if why := secret_in_value(value):
                raise ValueError(f"field {key!r} {why}: secrets are never stored here")
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
