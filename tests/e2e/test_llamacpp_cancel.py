"""Cancel mid-generation against a real llama.cpp server (issue 24 points 3, 7): ``openwork
serve`` with the README's settings; the server generates until its cap (``ignore_eos``, ``-n
1024``: far longer than any bound here), so a cancel always lands mid-generation. The turn ends
``cancelled`` and the server's slot is free again — it stopped generating because the daemon
closed the stream — and it serves the next request."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from tests.support.daemon import Daemon, start_daemon, start_turn
from tests.support.llamacpp import LlamaServer, llama_server
from tests.support.postgres import PgCluster
from tests.support.sse import open_events

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(300), pytest.mark.slow]

CAP = 1_024
CANCEL_BOUND_S = 5.0
"""A bound on the waits after the cancel's 202 (the promise is 1 s; the machine is shared)."""
FIRST_TOKEN_BOUND_S = 100.0


@dataclass
class Local:
    server: LlamaServer
    daemon: Daemon


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def local(
    pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Local]:
    home = tmp_path_factory.mktemp("llamacpp-cancel") / "home"
    database_url = await pg_cluster.new_database()
    async with llama_server(n_ctx=4_096, n_predict=CAP, ignore_eos=True) as server:
        readme = {
            "OPENWORK_PROVIDER": "openai-chat",
            "OPENWORK_PROVIDER_BASE_URL": server.openai_base_url,
            "OPENWORK_MODEL": "smollm2",
        }
        daemon = await start_daemon(home=home, database_url=database_url, env=readme)
        try:
            await daemon.logged("window_probe.served", timeout=60)
            yield Local(server, daemon)
        finally:
            assert await daemon.stop() == 0


async def test_a_cancel_mid_generation_ends_the_turn_and_frees_the_servers_slot(
    local: Local, tmp_path: Path
) -> None:
    """Issue 24 point 3: the first text delta has arrived, the server is still generating; the
    cancel (202) ends the turn ``cancelled``, the slot stops processing well before the cap,
    and a following request is served."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with local.daemon.client() as client:
        client.timeout = httpx.Timeout(120)
        created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
        sid = created.json()["session_id"]
        async with open_events(client, f"/v1/sessions/{sid}/events") as events:
            turn_id = await start_turn(client, sid, "Tell me a long story.", "req-story")
            await events.until(lambda e: e.type == "text_delta", timeout=FIRST_TOKEN_BOUND_S)
            assert await local.server.busy(), "the server is generating"
            cancel = await client.post(f"/v1/sessions/{sid}/turns/{turn_id}/cancel")
            assert cancel.status_code == 202, cancel.text
            accepted = time.monotonic()
            finished = await events.until(
                lambda e: e.type == "turn_finished" and e.turn_id == turn_id,
                timeout=CANCEL_BOUND_S,
            )
            took = time.monotonic() - accepted
        assert finished[-1].update["outcome"]["status"] == "cancelled"
        await local.server.wait_idle(timeout=CANCEL_BOUND_S)
        turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
        assert turn["status"] == "cancelled"
    async with httpx.AsyncClient(timeout=FIRST_TOKEN_BOUND_S) as direct:
        answer = await direct.post(
            f"{local.server.openai_base_url}/chat/completions",
            json={"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2},
        )
    assert answer.status_code == 200, answer.text
    assert answer.json()["usage"]["completion_tokens"] == 2
    print(f"cancel mid-generation: the turn ended {took:.3f} s after the 202")
