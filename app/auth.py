"""Bearer-token authentication and roles.

Tokens come from settings and are kept only as SHA-256 digests; a principal's
``subject`` is derived from the digest, so sessions can record their owner
without storing the token. The subject never leaves the server as an author:
a token without a name signs its versions with an HMAC label under a secret
key, which a reader of the versions cannot check a guessed token against.
With no tokens configured the server is single-user: every request is the
local editor.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from app.errors import AuthError
from app.settings import Settings, TokenRole


@dataclass(frozen=True)
class Principal:
    subject: str  # stable and opaque: owns sessions
    role: TokenRole
    name: str | None = None  # shown as the author of versions
    label: str | None = None  # the author when there is no name: stable, opaque, keyed

    @property
    def author(self) -> str:
        return self.name or self.label or self.subject

    @property
    def can_edit(self) -> bool:
        return self.role in ("editor", "admin")

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def may_use_session(self, owner: str | None) -> bool:
        return self.is_admin or owner is None or owner == self.subject


LOCAL_USER = Principal(subject="local", role="admin", name="local user")


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _label_key(settings: Settings, digests: list[str]) -> bytes:
    if settings.identity_key is not None:
        return settings.identity_key.get_secret_value().encode("utf-8")
    # No key configured: one only the holder of every token could compute.
    return hashlib.sha256("\n".join(sorted(digests)).encode("ascii")).digest()


class Authenticator:
    def __init__(self, settings: Settings) -> None:
        self._holders = {
            _digest(token): holder for token, holder in settings.token_holders().items()
        }
        self._key = _label_key(settings, list(self._holders))

    def _label(self, role: str, digest: str) -> str:
        mac = hmac.new(self._key, digest.encode("ascii"), hashlib.sha256).hexdigest()
        return f"{role}-{mac[:12]}"

    @property
    def single_user(self) -> bool:
        return not self._holders

    def authenticate(self, token: str | None) -> Principal:
        if self.single_user:
            return LOCAL_USER
        if not token:
            raise AuthError("A bearer token is required.")
        digest = _digest(token)
        holder = self._holders.get(digest)
        if holder is None:
            raise AuthError("The token is not valid.")
        return Principal(
            subject=f"tok_{digest[:16]}",
            role=holder.role,
            name=holder.name,
            label=self._label(holder.role, digest),
        )


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None
