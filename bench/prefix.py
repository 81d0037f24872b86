"""Prefix stability: the share of each request that the next one repeats byte for byte.

Run: ``.venv/bin/python bench/prefix.py``. Starts ``openwork serve`` (its own fresh database)
against the fake OpenAI-compatible provider and runs one session of 30 model calls in two turns
of 15 (14 tool calls — ``read``s and, in the second turn, a ``write`` — then text). Between the
turns the user edits ``AGENTS.md`` (the World State reports it in a new message). The raw request
bodies are captured as the fake provider received them.

For each pair of consecutive requests, the prompt of the earlier one — its tool definitions, then
each of its messages, each as the exact JSON bytes sent — is compared with the later one's:
the share is the bytes of the earlier prompt that the later one starts with (goal: 100 % for
every pair; no compaction happens in this session). Every break is printed with its cause (the
first differing part and both versions). The other top-level fields (model, stream options,
limits) must be identical too. Nothing here is asserted by the test suite.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package

from bench.soak import turn as soak_turn
from bench.startup import BYTECODE
from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.daemon import start_daemon
from tests.support.postgres import find_cluster

CALLS_PER_TURN = 15


def turn_script(turn: int) -> list[Reply]:
    calls: list[Reply] = []
    for i in range(CALLS_PER_TURN - 1):
        call_id = f"call_{turn}_{i}"
        if turn == 2 and i == 5:
            spec = ToolCallSpec(call_id, "write", {"path": "out.txt", "content": "written\n"})
        else:
            spec = ToolCallSpec(call_id, "read", {"path": f"notes{i}.md"})
        calls.append(Reply(tool_calls=(spec,)))
    return [*calls, Reply(text=f"turn {turn} done")]


async def completed_turn(client: httpx.AsyncClient, sid: str, request_id: str) -> None:
    outcome = await soak_turn(client, sid, request_id)
    assert outcome["status"] == "completed", outcome


def prompt_parts(body: dict[str, Any]) -> list[tuple[str, bytes]]:
    """The prompt in the order a provider renders it: tools, then the messages."""
    parts = [("tools", orjson.dumps(body.get("tools", [])))]
    parts += [
        (f"message {n} ({m.get('role')})", orjson.dumps(m))
        for n, m in enumerate(body["messages"], start=1)
    ]
    return parts


def shared_prefix(
    before: dict[str, Any], after: dict[str, Any]
) -> tuple[float, str | None, bytes, bytes]:
    """(share of ``before``'s prompt bytes repeated by ``after``, the first differing part and
    its two versions)."""
    old, new = prompt_parts(before), prompt_parts(after)
    total = sum(len(b) for _, b in old)
    kept = 0
    for position, (name, data) in enumerate(old):
        other = new[position][1] if position < len(new) else b""
        if data != other:
            return kept / total, name, data, other
        kept += len(data)
    return 1.0, None, b"", b""


def other_fields(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in ("messages", "tools")}


async def main() -> None:
    cluster = await find_cluster()
    await cluster.create_template()
    url = await cluster.new_database()
    with tempfile.TemporaryDirectory() as tmp, FakeProvider() as fake:
        root = Path(tmp)
        workspace = root / "ws"
        workspace.mkdir()
        (workspace / "AGENTS.md").write_text("# Rules\n\n- Be careful.\n", encoding="utf-8")
        for i in range(CALLS_PER_TURN):
            (workspace / f"notes{i}.md").write_text(f"# Notes {i}\n", encoding="utf-8")
        daemon = await start_daemon(
            home=root / "home", database_url=url, env=BYTECODE | provider_env(fake)
        )
        try:
            async with daemon.client() as client:
                created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
                sid = str(created.json()["session_id"])
                fake.push(*turn_script(1))
                await completed_turn(client, sid, "prefix-1")
                (workspace / "AGENTS.md").write_text(
                    "# Rules\n\n- Be careful.\n- Run the tests.\n", encoding="utf-8"
                )
                fake.push(*turn_script(2))
                await completed_turn(client, sid, "prefix-2")
        finally:
            await daemon.stop()
        bodies = [orjson.loads(r.raw) for r in fake.requests]
        assert fake.violations == [], fake.violations
    await cluster.drop_all()
    shares: list[float] = []
    breaks = 0
    for number in range(1, len(bodies)):
        before, after = bodies[number - 1], bodies[number]
        share, where, old, new = shared_prefix(before, after)
        shares.append(share)
        if other_fields(before) != other_fields(after):
            breaks += 1
            print(f"request {number} → {number + 1}: top-level fields differ:")
            print(f"  {other_fields(before)}\n  {other_fields(after)}")
        if where is not None:
            breaks += 1
            print(f"request {number} → {number + 1}: {share:.1%} kept; first change in {where}:")
            print(f"  before: {old[:300].decode(errors='replace')}")
            print(f"  after:  {new[:300].decode(errors='replace')}")
    world_state = sum(
        1 for body in bodies[-1:] for m in body["messages"] if "AGENTS.md" in str(m.get("content"))
    )
    print(f"{len(bodies)} requests; {len(shares)} consecutive pairs; {breaks} break(s)")
    print(f"AGENTS.md mentioned in {world_state} message(s) of the last request")
    print(f"smallest share kept                = {min(shares):7.2%}   (goal 100 %)")
    print(f"mean share kept                    = {sum(shares) / len(shares):7.2%}")


if __name__ == "__main__":
    asyncio.run(main())
