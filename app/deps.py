"""FastAPI dependencies as ``Annotated`` aliases, resolved from ``app.state``."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header
from starlette.requests import HTTPConnection

from app.auth import Principal, bearer_token
from app.errors import ForbiddenError
from app.services import Services
from app.settings import Settings


def _services(connection: HTTPConnection) -> Services:
    services: Services = connection.app.state.services
    return services


def _settings(connection: HTTPConnection) -> Settings:
    return _services(connection).settings


ServicesDep = Annotated[Services, Depends(_services)]
SettingsDep = Annotated[Settings, Depends(_settings)]


def _principal(
    services: ServicesDep, authorization: Annotated[str | None, Header()] = None
) -> Principal:
    return services.auth.authenticate(bearer_token(authorization))


PrincipalDep = Annotated[Principal, Depends(_principal)]


def _editor(principal: PrincipalDep) -> Principal:
    if not principal.can_edit:
        raise ForbiddenError("Reviewers can read workflows but not change them.")
    return principal


EditorDep = Annotated[Principal, Depends(_editor)]
