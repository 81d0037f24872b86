"""Tool output PostgreSQL cannot hold (docs/reliability.md "NUL-safe storage", issue 12 point 2):
a NUL byte from bash and a file name that is not UTF-8 (a lone surrogate once decoded) no longer
fail the turn; the model reads them as escapes, and after a daemon restart the request carries
the tool results byte for byte as before."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.daemon import run_turn_and_wait, start_daemon


def _tool_messages(body: object) -> list[str]:
    assert isinstance(body, dict)
    return [json.dumps(m, sort_keys=True) for m in body["messages"] if m["role"] == "tool"]


async def test_nul_and_non_utf8_tool_output_is_escaped_and_byte_stable_across_a_restart(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "plain.txt").write_text("x")
    os.close(os.open(os.fsencode(workspace) + b"/bad\xff.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    fake_provider.push(
        Reply(
            tool_calls=(
                ToolCallSpec("call_nul", "bash", {"command": "printf 'a\\000b'"}),
                ToolCallSpec("call_ls", "list", {}),
            )
        ),
        Reply(text="first answer"),
        Reply(text="second answer"),
    )
    env = provider_env(fake_provider)
    home = tmp_path / "home"
    daemon = await start_daemon(home=home, database_url=database_url, env=env)
    try:
        async with daemon.client() as client:
            sid = (await client.post("/v1/sessions", json={"workspace": str(workspace)})).json()[
                "session_id"
            ]
            try:
                tid, _ = await run_turn_and_wait(client, sid, "look", "req-1")
            except BaseException:
                print("\n".join(daemon.log_lines[-40:]))
                raise
            turn = (await client.get(f"/v1/sessions/{sid}/turns/{tid}")).json()
            assert (turn["status"], turn["final_text"]) == ("completed", "first answer")
    finally:
        assert await daemon.stop() == 0
    daemon = await start_daemon(home=home, database_url=database_url, env=env)
    try:
        async with daemon.client() as client:
            await run_turn_and_wait(client, sid, "again", "req-2")
    finally:
        assert await daemon.stop() == 0
    _, after_tools, after_restart = fake_provider.bodies
    before = _tool_messages(after_tools)
    assert len(before) == 2
    assert "a\\\\u0000b" in before[0]  # the model reads the six characters \u0000
    assert "bad\\\\udcff.txt" in before[1]
    assert _tool_messages(after_restart) == before
    assert fake_provider.violations == []


async def test_a_tool_call_id_storage_cannot_hold_fails_the_turn_as_the_providers_fault(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """context-window.md §4.1: the provider's call id is stored as it came, indexed with its
    turn. A 6 000-character id (past PostgreSQL's 2 704-byte index entry) and one holding
    U+0000 failed the turn ``persistence_error``, "could not persist a tool result", as if the
    database were at fault; they are the provider's broken output, ``model_protocol_error``,
    and nothing of the response is stored. A 256-character id works as before."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env=provider_env(fake_provider)
    )
    outcomes: list[tuple[str, str | None]] = []
    try:
        async with daemon.client() as client:
            created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
            sid = created.json()["session_id"]
            for n, call_id in enumerate((os.urandom(3000).hex(), "call\x00id", "c" * 256)):
                fake_provider.clear()
                fake_provider.push(
                    Reply(tool_calls=(ToolCallSpec(call_id, "list", {}),)), Reply(text="listed")
                )
                tid, _ = await run_turn_and_wait(client, sid, "look", f"req-{n}")
                turn = (await client.get(f"/v1/sessions/{sid}/turns/{tid}")).json()
                outcomes.append((turn["status"], turn["error_code"]))
            stored = (await client.get(f"/v1/sessions/{sid}/messages")).json()["messages"]
    finally:
        assert await daemon.stop() == 0
    assert outcomes == [("failed", "model_protocol_error")] * 2 + [("completed", None)]
    assert [m["role"] for m in stored if m["role"] in ("assistant", "tool")] == [
        "assistant",
        "tool",
        "assistant",
    ]
