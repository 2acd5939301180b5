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
from app.settings import Role, Settings


@dataclass(frozen=True)
class Principal:
    subject: str
    role: Role

    @property
    def can_edit(self) -> bool:
        return self.role in ("editor", "admin")

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def may_use_session(self, owner: str | None) -> bool:
        return self.is_admin or owner is None or owner == self.subject


LOCAL_USER = Principal(subject="local", role="admin")


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Authenticator:
    def __init__(self, settings: Settings) -> None:
        self._roles = {_digest(token): role for token, role in settings.token_roles().items()}

    @property
    def single_user(self) -> bool:
        return not self._roles

    def authenticate(self, token: str | None) -> Principal:
        if self.single_user:
            return LOCAL_USER
        if not token:
            raise AuthError("A bearer token is required.")
        digest = _digest(token)
        role = self._roles.get(digest)
        if role is None:
            raise AuthError("The token is not valid.")
        return Principal(subject=f"tok_{digest[:16]}", role=role)


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None
