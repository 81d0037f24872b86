"""Session load (issue 13, point 4): a 10 000-message session into Chat State against the raw
SELECT and decode of the same rows.

Run: ``.venv/bin/python bench/session_load.py [--messages 10000]``. On a fresh database of the
local PostgreSQL, one session gets one turn of ``--messages`` rows written the way the runtime
writes them (``encode_content``): the user's request, then assistant messages with text and one
``read`` tool call, each followed by its tool result (~400 bytes of output), and a final answer.
Then, in the same run, medians of ``ROUNDS``:

* raw: one ``SELECT`` of the rows on a plain asyncpg connection and the decode of each row's
  content into a ``Message`` (``CONTENT_BLOCKS.validate_json``) — the physical floor, decoded
  with the cyclic garbage collector off (as the load decodes); ``orjson.loads`` of the same
  contents for scale;
* load: ``SessionRegistry.load`` (lease, records, projection, Chat State load with its
  invariants, Tool Surface, actor) on the real ``OpenWorkCore``, closed again after each round.

Goal: load ÷ raw ≤ 3.0. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

import asyncpg
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openwork_chat_state.messages import (
    CONTENT_BLOCKS,
    Message,
    Role,
    TextBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.ids import SessionId
from openwork_core.storage.codec import encode_content
from openwork_core.storage.postgres.connection import create_pool
from openwork_core.storage.postgres.store import PostgresStore
from tests.support.postgres import find_cluster
from tests.support.runtime import runtime

ROUNDS = 5


def _messages(count: int) -> list[tuple[str, str, str | None, str | None]]:
    """(role, content, provider_call_id, tool_name) in order."""
    rows: list[tuple[str, str, str | None, str | None]] = [
        ("user", encode_content(user_text("please look at every file")), None, None)
    ]
    pairs = (count - 2) // 2
    output = "line of a file that the model asked to read\n" * 9
    for i in range(pairs):
        call_id = f"call_{i}"
        assistant = Message(
            role=Role.ASSISTANT,
            content=(
                TextBlock(text=f"Now reading file {i}."),
                ToolCallBlock(
                    id=call_id,
                    name="read",
                    input=f'{{"path": "src/file_{i}.py"}}',
                    state=ToolCallState.SUBMITTED,
                ),
            ),
        )
        result = Message(
            role=Role.TOOL,
            content=(
                ToolResultBlock(
                    id=call_id,
                    name="read",
                    state=ToolResultState.SUCCESS,
                    output=(TextBlock(text=output),),
                ),
            ),
        )
        rows.append(("assistant", encode_content(assistant), None, None))
        rows.append(("tool", encode_content(result), call_id, "read"))
    final = Message(role=Role.ASSISTANT, content=(TextBlock(text="All files read."),))
    rows.append(("assistant", encode_content(final), None, None))
    return rows


async def _fill(url: str, sid: str, count: int) -> int:
    conn = await asyncpg.connect(url)
    try:
        turn_id = "turn_bench_load"
        await conn.execute(
            """INSERT INTO turns (id, session_id, client_request_id, sequence, model_id,
                                  resolved_provider_id, resolved_model_name, app_version, status,
                                  ended_at)
               VALUES ($1, $2, 'bench', 1, 'default/scripted-model', 'default',
                       'scripted-model', 'bench', 'completed', now())""",
            turn_id,
            sid,
        )
        rows = _messages(count)
        await conn.executemany(
            """INSERT INTO messages (id, session_id, turn_id, sequence, role, content,
                                     provider_call_id, tool_name, message_kind)
               VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, 'normal')""",
            [
                (f"msg_bench_{n}", sid, turn_id, n, role, content, call, tool)
                for n, (role, content, call, tool) in enumerate(rows, start=1)
            ],
        )
        return len(rows)
    finally:
        await conn.close()


async def _raw(url: str, sid: str) -> tuple[float, float, float]:
    conn = await asyncpg.connect(url)
    try:
        start = time.perf_counter()
        rows = await conn.fetch(
            """SELECT id, role, message_kind, sequence, content::text AS content
               FROM messages WHERE session_id = $1 ORDER BY sequence""",
            sid,
        )
        gc.disable()  # the floors without the cyclic collector (the load pauses it too)
        try:
            selected = time.perf_counter()
            parsed = [orjson.loads(r["content"]) for r in rows]
            json_s = time.perf_counter() - selected
            assert len(parsed) == len(rows)
            selected = time.perf_counter()
            decoded = [
                Message(
                    role=Role(r["role"]), content=tuple(CONTENT_BLOCKS.validate_json(r["content"]))
                )
                for r in rows
            ]
            done = time.perf_counter()
        finally:
            gc.enable()
        assert len(decoded) == len(rows)
        select_s = selected - start - json_s
        return select_s, select_s + json_s, select_s + (done - selected)
    finally:
        await conn.close()


async def main(count: int) -> None:
    cluster = await find_cluster()
    await cluster.create_template()
    url = await cluster.new_database()
    pool = await create_pool(url, max_size=5)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            async with runtime(PostgresStore(pool), Path(tmp)) as rt:
                sid = SessionId(await rt.new_session())
                written = await _fill(url, sid, count)
                selects: list[float] = []
                jsons: list[float] = []
                raws: list[float] = []
                loads: list[float] = []
                for r in range(ROUNDS + 1):
                    select_s, json_s, raw_s = await _raw(url, sid)
                    start = time.perf_counter()
                    await rt.core.sessions.load(sid)
                    load_s = time.perf_counter() - start
                    await rt.core.sessions.close(sid)
                    if r == 0:
                        continue  # warm-up (statement caches, imports)
                    selects.append(select_s)
                    jsons.append(json_s)
                    raws.append(raw_s)
                    loads.append(load_s)
    finally:
        await pool.close()
        await cluster.drop_all()
    select, json_floor, raw, load = (statistics.median(x) for x in (selects, jsons, raws, loads))
    print(f"session load: {written} messages (median of {ROUNDS})")
    print(f"  raw SELECT                      {select * 1000:8.1f} ms")
    print(f"  raw SELECT + orjson.loads       {json_floor * 1000:8.1f} ms")
    print(f"  raw SELECT + decode to Message  {raw * 1000:8.1f} ms")
    print(f"  load into Chat State            {load * 1000:8.1f} ms")
    print(f"  load ÷ raw SELECT + decode      {load / raw:8.2f}   (goal ≤ 3.0)")
    print(f"  load ÷ raw SELECT + orjson      {load / json_floor:8.2f}   (for scale)")
    print(f"  load ÷ raw SELECT               {load / select:8.2f}   (for scale)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=10_000)
    asyncio.run(main(parser.parse_args().messages))
