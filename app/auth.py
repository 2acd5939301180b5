"""Bearer-token authentication and roles.

Tokens come from settings and are kept only as SHA-256 digests; a principal's
``subject`` is derived from the digest, so sessions can record their owner
without storing the token. With no tokens configured the server is
single-user: every request is the local editor.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from app.errors import AuthError
from app.settings import Settings, TokenRole


@dataclass(frozen=True)
class Principal:
    subject: str  # stable and opaque: owns sessions
    role: TokenRole
    name: str | None = None  # shown as the author of versions

    @property
    def author(self) -> str:
        return self.name or self.subject

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


class Authenticator:
    def __init__(self, settings: Settings) -> None:
        self._holders = {
            _digest(token): holder for token, holder in settings.token_holders().items()
        }

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
        return Principal(subject=f"tok_{digest[:16]}", role=holder.role, name=holder.name)


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None
