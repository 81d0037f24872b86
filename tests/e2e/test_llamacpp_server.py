"""A local model out of the box (issue 24 point 7): ``openwork serve`` configured as the README
says (kind, base URL, model; nothing else) against a real llama.cpp server — llama.cpp's own
HTTP server from the ``xllamacpp`` wheel serving SmolLM2-135M-Instruct with ``-c 8192``. Its
chat template renders no tools, so the server sees far fewer tokens than the daemon sends.

One server and one daemon for the module. The daemon asks for up to 1 024 tokens (its reserve),
which overrides the server's ``-n``; the server's grammar ends each answer within 40 letters, so
a turn costs the same whether the model would have said hello or rambled to its cap. That is
also what these first turns claim: short answers. A first answer that runs to its 1 024 tokens
brings the second request to the compaction line (System + Tools are estimated at ~3 900), and
SmolLM2 cannot write the summary (docs/acceptance.md, "The first hour with a local model")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from tests.support.daemon import Daemon, run_turn_and_wait, start_daemon
from tests.support.llamacpp import LlamaServer, llama_server
from tests.support.postgres import PgCluster

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(300), pytest.mark.slow]
"""A CPU model's prompt evaluation on 2 shared cores: seconds alone, minutes under load."""

WINDOW = 8_192
MODEL = "smollm2"
TURN_BOUND_S = 240.0
"""A turn of the real model: seconds alone, minutes when the suite's slow group (kill matrix,
fuzzing) shares the two cores with it at the start of a run."""


@dataclass
class Local:
    server: LlamaServer
    daemon: Daemon


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def local(
    pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Local]:
    home = tmp_path_factory.mktemp("llamacpp") / "home"
    database_url = await pg_cluster.new_database()
    async with llama_server(n_ctx=WINDOW, n_predict=16, answer_chars=40) as server:
        readme = {  # the README's quickstart: nothing but these three
            "OPENWORK_PROVIDER": "openai-chat",
            "OPENWORK_PROVIDER_BASE_URL": server.openai_base_url,
            "OPENWORK_MODEL": MODEL,
        }
        daemon = await start_daemon(home=home, database_url=database_url, env=readme)
        try:
            await daemon.logged("window_probe.served", timeout=60)
            yield Local(server, daemon)
        finally:
            assert await daemon.stop() == 0


@pytest_asyncio.fixture(loop_scope="module")
async def client(local: Local) -> AsyncIterator[httpx.AsyncClient]:
    async with local.daemon.client() as http:
        http.timeout = httpx.Timeout(120)
        yield http


async def _session(client: httpx.AsyncClient, tmp_path: Path) -> str:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
    assert created.status_code == 201, created.text
    sid = created.json()["session_id"]
    assert isinstance(sid, str)
    return sid


async def test_the_served_window_and_the_missing_tool_support_are_reported(
    local: Local, client: httpx.AsyncClient
) -> None:
    """Issue 24 point 4: GET /v1/providers shows what llama.cpp's /props says — one slot's
    8 192 tokens and ``chat_template_caps.supports_tools = false`` — and warns
    ``tools_unsupported`` with the fix."""
    props = await local.server.props()
    assert props["chat_template_caps"]["supports_tools"] is False  # type: ignore[index]
    (provider,) = (await client.get("/v1/providers")).json()["providers"]
    (model,) = provider["models"]
    served = model["served"]
    assert (served["server"], served["context_window"], served["supports_tools"]) == (
        "llama.cpp",
        WINDOW,
        False,
    )
    assert served["probed_at"]
    assert [w["code"] for w in model["warnings"]] == ["tools_unsupported"]
    assert "--jinja" in model["warnings"][0]["message"]


async def test_the_first_turns_complete_on_an_8192_window_without_any_compaction(
    local: Local, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 24 points 1, 2, 4, 7: with the README's settings the first two turns complete —
    1 024 reserved, System + Tools + the Conversation under the 6 093-token line, no summary;
    each turn carries ``tools_unsupported`` and ``input_truncation_suspected`` (a ``warning``
    update and the turn's ``warnings``); usage and cached tokens are the server's own (its
    /metrics count exactly the prompt tokens it evaluated and the tokens it generated)."""
    sid = await _session(client, tmp_path)
    context = (await client.get(f"/v1/sessions/{sid}/context")).json()
    assert context["limits"]["context_window"] == WINDOW
    assert context["budget"]["reserved_output_tokens"] == 1_024
    seen: list[tuple[str, dict[str, object], list[dict[str, object]]]] = []
    for number, text in enumerate(("Say hello.", "Say it again."), start=1):
        evaluated = await local.server.metric("prompt_tokens_total")
        predicted = await local.server.metric("tokens_predicted_total")
        turn_id, updates = await run_turn_and_wait(client, sid, text, f"req-{number}", TURN_BOUND_S)
        turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
        assert (turn["status"], turn["error_code"]) == ("completed", None), turn
        kinds = [u["update"] for u in updates]  # type: ignore[index]
        assert "compacting" not in [k.get("phase") for k in kinds]  # type: ignore[union-attr]
        usage = turn["usage"]
        fresh = usage["input_tokens"] - usage["cached_input_tokens"]
        assert fresh == await local.server.metric("prompt_tokens_total") - evaluated
        assert usage["output_tokens"] == await local.server.metric("tokens_predicted_total") - (
            predicted
        )
        print(f"turn {number}: usage {usage}")
        seen.append((turn_id, turn, [k for k in kinds if k["type"] == "warning"]))  # type: ignore[index]
    assert (await client.get(f"/v1/sessions/{sid}/compactions")).json()["compactions"] == []
    for _turn_id, turn, warning_updates in seen:
        codes = {w["code"] for w in turn["warnings"]}
        assert {"tools_unsupported", "input_truncation_suspected"} <= codes, turn["warnings"]
        assert {w["code"] for w in warning_updates} == codes
    second = seen[1][1]["usage"]
    assert second["cached_input_tokens"] > 0, "the server reused its cached prompt prefix"
    context = (await client.get(f"/v1/sessions/{sid}/context")).json()
    estimate = context["budget"]["estimated_input_tokens"]
    assert second["input_tokens"] < estimate // 2, "the server's count, not the estimate"
    overview = (await client.get(f"/v1/sessions/{sid}/context/overview")).json()
    shown = {w["code"] for w in overview["warnings"]}
    assert {"tools_unsupported", "input_truncation_suspected"} <= shown, "the context page's"


async def test_a_real_overflow_no_compaction_can_fix_fails_context_window_too_small(
    local: Local, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 24 point 1: a first request longer than the server's window — the estimate says no
    compaction can help (it is all the last request), so it goes out with ``window_too_small``;
    llama.cpp answers ``exceed_context_size_error``; the turn fails ``context_window_too_small``
    at once, naming the window and what to change, and no summary is asked for (the server
    generated nothing)."""
    sid = await _session(client, tmp_path)
    predicted = await local.server.metric("tokens_predicted_total")
    turn_id, _ = await run_turn_and_wait(client, sid, "word " * 9_000, "req-long", TURN_BOUND_S)
    turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
    assert (turn["status"], turn["error_code"]) == ("failed", "context_window_too_small"), turn
    message = turn["message"]
    assert f"{WINDOW}-token context window" in message and "llama.cpp -c" in message
    assert "exceeds the available context size" in message, "the server's own words"
    assert "window_too_small" in {w["code"] for w in turn["warnings"]}
    assert await local.server.metric("tokens_predicted_total") == predicted
    assert (await client.get(f"/v1/sessions/{sid}/compactions")).json()["compactions"] == []
