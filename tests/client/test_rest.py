"""REST errors become messages with exit codes."""

from __future__ import annotations

import httpx
import pytest

from app.client.rest import ChatError, Rest


def rest(handler: httpx.MockTransport) -> Rest:
    return Rest(httpx.AsyncClient(base_url="http://planwright.test", transport=handler))


async def test_the_error_message_of_the_service_is_shown() -> None:
    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json={"error": {"code": "not_found", "message": "no such"}})

    with pytest.raises(ChatError) as caught:
        await rest(httpx.MockTransport(reply)).call("GET", "/v1/workflows/x")
    assert (caught.value.message, caught.value.code) == ("no such", 1)


async def test_a_refused_token_and_an_unreachable_server_exit_2() -> None:
    with pytest.raises(ChatError) as caught:
        await rest(httpx.MockTransport(lambda _: httpx.Response(401))).call("GET", "/v1/x")
    assert caught.value.code == 2 and "valid token" in caught.value.message

    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(ChatError) as caught:
        await rest(httpx.MockTransport(unreachable)).call("GET", "/v1/x")
    assert caught.value.code == 2 and "cannot reach http://planwright.test" in caught.value.message


async def test_a_plain_text_error_and_a_success() -> None:
    text = httpx.MockTransport(lambda _: httpx.Response(502, text="bad gateway"))
    with pytest.raises(ChatError, match="bad gateway"):
        await rest(text).call("GET", "/v1/x")
    ok = httpx.MockTransport(lambda _: httpx.Response(200, json=[{"id": "w1"}]))
    assert await rest(ok).call("GET", "/v1/workflows") == [{"id": "w1"}]
