"""How long the service takes to answer under faults; prints one JSON object.

One uvicorn worker over a redis-server and a Postgres cluster of this script's own
(the fault tier's helpers, ``tests/faults/helpers.py``), default settings:

- ``hung_redis_turn_answer_ms``: a turn sent while Redis hangs (``DEBUG SLEEP``)
  until its ``error`` frame (``lock_unavailable``);
- ``hung_redis_put_ms``: a PUT while Redis hangs (committed, published later);
- ``pg_cut_put_503_ms``: a PUT while the database refuses connections (503);
- ``pg_back_first_turn_ms``: the first turn after the database is back, sent to
  ``turn.completed``;
- ``killed_holder_next_turn_ms``: from SIGKILL of a worker mid-turn to
  ``turn.started`` of a turn sent once on another worker (its heartbeat lapsing).

Each is the median of ``--rounds`` rounds (the kill: one round).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.anthropic_server import FakeAnthropicServer, delay_reply, text_reply, tool_reply
from tests.faults.helpers import SERVICE_DB, OwnPostgres, OwnRedis
from tests.integration.helpers import (
    DOC,
    Cluster,
    Rest,
    chat,
    recv,
    recv_until,
    turn,
)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


async def _measure(
    cluster: Cluster, redis: OwnRedis, pg: OwnPostgres, rounds: int
) -> dict[str, Any]:
    (worker,) = cluster.start("bench")
    fake = cluster.fake
    found: dict[str, list[float]] = {
        "hung_redis_turn_answer_ms": [],
        "hung_redis_put_ms": [],
        "pg_cut_put_503_ms": [],
        "pg_back_first_turn_ms": [],
    }
    async with Rest(worker, cluster) as rest:
        for _ in range(rounds):
            wid = (await rest.create_workflow())["id"]
            session = await rest.create_session(wid)
            async with chat(worker, session["id"]) as ws:
                await asyncio.sleep(0.2)  # the socket subscribes after its handshake
                with redis.paused(3):
                    sent = time.perf_counter()
                    await ws.send(turn("rename it"))
                    answer = await recv(ws, 2.5)
                    found["hung_redis_turn_answer_ms"].append(_ms(time.perf_counter() - sent))
                    assert answer.get("code") == "lock_unavailable", answer
                    sent = time.perf_counter()
                    await rest.put(wid, DOC.replace("Referral intake", "Hung"), 1)
                    found["hung_redis_put_ms"].append(_ms(time.perf_counter() - sent))
                pg.cut_off(SERVICE_DB)
                try:
                    sent = time.perf_counter()
                    response = await rest.http.put(
                        f"/v1/workflows/{wid}", json={"yaml": DOC, "expected_version": 2}
                    )
                    found["pg_cut_put_503_ms"].append(_ms(time.perf_counter() - sent))
                    assert response.status_code == 503, response.text
                finally:
                    pg.allow(SERVICE_DB)
                fake.queue(text_reply("Back."))
                sent = time.perf_counter()
                await ws.send(turn("are you back?"))
                await recv_until(ws, "turn.completed")
                found["pg_back_first_turn_ms"].append(_ms(time.perf_counter() - sent))
    medians: dict[str, Any] = {k: statistics.median(v) for k, v in found.items()}
    medians["killed_holder_next_turn_ms"] = await _kill(cluster)
    return medians


async def _kill(cluster: Cluster) -> float:
    doomed, other = cluster.start("doomed", "other")
    cluster.fake.queue(
        tool_reply(("update_workflow", {"name": "Before"})), delay_reply(60, text_reply("x"))
    )
    async with Rest(doomed, cluster) as rest:
        wid = (await rest.create_workflow())["id"]
        session = await rest.create_session(wid)
        fresh = await rest.create_session(wid)
        async with chat(doomed, session["id"]) as ws:
            await ws.send(turn("rename it, then think"))
            await recv_until(ws, "workflow")
            while len(cluster.fake.requests) < 2:
                await asyncio.sleep(0.02)
            doomed.kill()
            killed = time.perf_counter()
    cluster.fake.queue(text_reply("Hello."))
    async with chat(other, fresh["id"]) as ws_b:
        await ws_b.send(turn("hello"))
        await recv_until(ws_b, "turn.started", timeout_s=30)
        return _ms(time.perf_counter() - killed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    pg = OwnPostgres()
    folder = tempfile.mkdtemp(prefix="planwright-bench-faults-")  # kept on failure: the logs
    with FakeAnthropicServer() as fake:
        redis = OwnRedis(Path(folder))
        try:
            pg.init().start()
            redis.start()
            client = redis.client()
            cluster = Cluster(
                database_url=pg.create_database(SERVICE_DB),
                redis_url=redis.url,
                redis_conn=client,
                fake=fake,
                log_dir=Path(folder),
            )
            try:
                result = asyncio.run(_measure(cluster, redis, pg, args.rounds))
            finally:
                cluster.close()
                client.close()
        except BaseException:
            print(f"failed; worker logs in {folder}", file=sys.stderr)
            raise
        finally:
            redis.kill()
            pg.remove()
    shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps({"rounds": args.rounds, **result}))


if __name__ == "__main__":
    main()
