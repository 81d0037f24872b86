"""Hostile input over HTTP (issue 12 points 3–5; daemon-api.md §2 "never a 500 for bad input";
docs/reliability.md "Bounds", "One envelope everywhere"): each request of the table answers its
4xx code in the error envelope, no body carries a database or library text, and nothing is
written."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import httpx
import orjson

from tests.support.daemon import TOKEN, start_daemon

MIB = 1024 * 1024


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    path: str
    status: int
    code: str
    json: object = None
    raw: bytes | None = None
    headers: dict[str, str | bytes] = field(default_factory=dict)


def _raw_json(text: str) -> bytes:
    """A JSON body written by hand, so that escapes such as a lone surrogate reach the daemon."""
    return text.encode()


def _cases(sid: str, workspace: str) -> list[Case]:
    turn = f"/v1/sessions/{sid}/turns"
    text = {"type": "text", "text": "hi"}
    provider = {"kind": "openai-chat", "models": [{"name": "m"}]}
    return [
        Case(
            "256-char workspace name",
            "POST",
            "/v1/sessions",
            400,
            "invalid_workspace",
            json={"workspace": f"{workspace}/{'a' * 256}"},
        ),
        Case(
            "blank provider",
            "POST",
            "/v1/sessions",
            422,
            "invalid_request",
            json={"workspace": workspace, "provider": " "},
        ),
        Case(
            "blank model",
            "POST",
            "/v1/sessions",
            422,
            "invalid_request",
            json={"workspace": workspace, "model": " "},
        ),
        Case(
            "NUL in provider",
            "POST",
            "/v1/sessions",
            400,
            "invalid_request",
            json={"workspace": workspace, "provider": "a\x00b"},
        ),
        Case(
            "lone surrogate in model",
            "POST",
            "/v1/sessions",
            400,
            "invalid_request",
            raw=_raw_json(f'{{"workspace": "{workspace}", "model": "m\\ud800"}}'),
        ),
        Case(
            "NUL in workspace",
            "POST",
            "/v1/sessions",
            400,
            "invalid_request",
            json={"workspace": f"{workspace}\x00"},
        ),
        Case(
            "NUL in client_request_id",
            "POST",
            turn,
            400,
            "invalid_request",
            json={"client_request_id": "c\x00", "input": [text]},
        ),
        Case(
            "lone surrogate in client_request_id",
            "POST",
            turn,
            400,
            "invalid_request",
            raw=_raw_json(
                '{"client_request_id": "\\udc80", "input": [{"type": "text", "text": "x"}]}'
            ),
        ),
        Case(
            "blank client_request_id",
            "POST",
            turn,
            422,
            "invalid_request",
            json={"client_request_id": " ", "input": [text]},
        ),
        Case(
            "NUL in user text",
            "POST",
            turn,
            400,
            "invalid_request",
            json={"client_request_id": "c1", "input": [{"type": "text", "text": "a\x00b"}]},
        ),
        Case(
            "lone surrogate in user text",
            "POST",
            turn,
            400,
            "invalid_request",
            raw=_raw_json(
                '{"client_request_id": "c2", "input": [{"type": "text", "text": "\\ud83d"}]}'
            ),
        ),
        Case(
            "NUL in a disabled skill name",
            "POST",
            turn,
            400,
            "invalid_request",
            json={"client_request_id": "c3", "input": [text], "disabled_skill_names": ["\x00"]},
        ),
        Case(
            "10 MB of user text",
            "POST",
            turn,
            422,
            "invalid_request",
            json={"client_request_id": "c4", "input": [{"type": "text", "text": "x" * (10 * MIB)}]},
        ),
        Case("NUL in a session id", "GET", "/v1/sessions/ses_%00", 400, "invalid_request"),
        Case(
            "lone surrogate in a session id", "GET", "/v1/sessions/ses_%ED%A0%80", 404, "not_found"
        ),
        Case("300-char session id", "GET", f"/v1/sessions/{'s' * 300}", 404, "not_found"),
        Case("NUL in a turn id", "GET", f"{turn}/t%00", 400, "invalid_request"),
        Case(
            "NUL in a tool call id",
            "POST",
            f"{turn}/turn_x/permissions/c%00",
            400,
            "invalid_request",
            json={"decision": "deny"},
        ),
        Case(
            "after_sequence beyond int64",
            "GET",
            f"/v1/sessions/{sid}/messages?after_sequence={2**63}",
            422,
            "invalid_request",
        ),
        Case(
            "negative after_sequence",
            "GET",
            f"/v1/sessions/{sid}/messages?after_sequence=-1",
            422,
            "invalid_request",
        ),
        Case(
            "limit over 500",
            "GET",
            f"/v1/sessions/{sid}/messages?limit=501",
            422,
            "invalid_request",
        ),
        Case(
            "events after_sequence beyond int64",
            "GET",
            f"/v1/sessions/{sid}/events?after_sequence={2**64}",
            422,
            "invalid_request",
        ),
        Case(
            "Last-Event-ID: ²",
            "GET",
            f"/v1/sessions/{sid}/events",
            400,
            "invalid_request",
            headers={"Last-Event-ID": "²".encode()},
        ),
        Case(
            "Last-Event-ID beyond int64",
            "GET",
            f"/v1/sessions/{sid}/events",
            400,
            "invalid_request",
            headers={"Last-Event-ID": str(2**63)},
        ),
        Case(
            "NUL in a transcript compaction_id",
            "GET",
            f"/v1/sessions/{sid}/transcript?compaction_id=%00",
            400,
            "invalid_request",
        ),
        Case(
            "NUL in a rewind compaction_id",
            "POST",
            f"/v1/sessions/{sid}/rewind",
            400,
            "invalid_request",
            json={"compaction_id": "\x00"},
        ),
        Case(
            "NUL in a change id",
            "POST",
            f"/v1/sessions/{sid}/file-changes/undo",
            400,
            "invalid_request",
            json={"change_ids": ["\x00"]},
        ),
        Case(
            "NUL in a provider id",
            "PUT",
            "/v1/providers/p%00",
            400,
            "invalid_request",
            json=provider,
        ),
        Case(
            "NUL in a base_url",
            "PUT",
            "/v1/providers/p",
            400,
            "invalid_request",
            json={**provider, "base_url": "http://127.0.0.1:9/\x00"},
        ),
        Case(
            "context_window 10**30",
            "PUT",
            "/v1/providers/p",
            422,
            "invalid_request",
            json={"kind": "openai-chat", "models": [{"name": "m", "context_window": 10**30}]},
        ),
        Case(
            "NUL in a skill name",
            "PUT",
            "/v1/skills/a%00",
            400,
            "invalid_request",
            json={"disabled": True},
        ),
        Case(
            "NUL in a session title",
            "PATCH",
            f"/v1/sessions/{sid}",
            400,
            "invalid_request",
            json={"title": "a\x00b"},
        ),
        Case(
            "NUL in an MCP server's tool filter",
            "PUT",
            "/v1/mcp/servers/m",
            400,
            "invalid_request",
            json={"command": "/bin/true", "disabled_tools": ["a\x00b"]},
        ),
        Case(
            "NUL in a workspace filter",
            "GET",
            "/v1/sessions?workspace=a%00b",
            400,
            "invalid_request",
        ),
        Case(
            "NUL in the context page's session id",
            "GET",
            "/v1/sessions/a%00b/context/overview",
            400,
            "invalid_request",
        ),
        Case(
            "NUL in a file search",
            "GET",
            f"/v1/sessions/{sid}/files?query=a%00b",
            400,
            "invalid_request",
        ),
        Case("not JSON", "POST", "/v1/sessions", 422, "invalid_request", raw=b"{"),
        Case("unknown route", "GET", "/v1/nope", 404, "not_found"),
        Case("unknown method", "DELETE", "/v1/sessions", 405, "method_not_allowed"),
    ]


async def _counts(database_url: str) -> dict[str, int]:
    conn = await asyncpg.connect(database_url)
    try:
        counts = {
            t: await conn.fetchval(f"SELECT count(*) FROM {t}")
            for t in ("sessions", "turns", "messages", "providers", "skill_status", "mcp_servers")
        }
        titled = "SELECT count(*) FROM sessions WHERE title IS NOT NULL"
        return counts | {"titled sessions": await conn.fetchval(titled)}
    finally:
        await conn.close()


async def _send(client: httpx.AsyncClient, case: Case) -> httpx.Response:
    if case.raw is not None:
        headers = {"content-type": "application/json", **case.headers}
        return await client.request(case.method, case.path, content=case.raw, headers=headers)
    if case.json is not None:
        return await client.request(case.method, case.path, json=case.json, headers=case.headers)
    return await client.request(case.method, case.path, headers=case.headers)


async def test_every_hostile_input_answers_its_4xx_in_the_envelope_and_writes_nothing(
    tmp_path: Path, database_url: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    daemon = await start_daemon(home=tmp_path / "home", database_url=database_url)
    try:
        async with daemon.client() as client:
            created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
            assert created.status_code == 201
            sid = created.json()["session_id"]
            before = await _counts(database_url)
            wrong: list[str] = []
            for case in _cases(sid, str(workspace)):
                response = await _send(client, case)
                body = response.json()
                got = (response.status_code, body.get("error", {}).get("code"))
                if got != (case.status, case.code):
                    wrong.append(f"{case.name}: {got} {response.text[:200]}")
                for leak in ("asyncpg", "postgres", "Traceback", "detail"):
                    if leak.lower() in response.text.lower():
                        wrong.append(f"{case.name}: the body mentions {leak}")
            assert wrong == []
            assert await _counts(database_url) == before
    finally:
        assert await daemon.stop() == 0


async def _raw_exchange(url: str, head: str, body: bytes) -> tuple[int, dict[str, object]]:
    """One request over a plain socket: the head, then only ``body`` (maybe far less than the
    head announces), then the response read to its end. Proves the daemon answered without
    waiting for (or buffering) the rest of the body."""
    host, _, port = url.removeprefix("http://").partition(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(head.encode() + body)
        await writer.drain()
        async with asyncio.timeout(20):
            status_line = await reader.readline()
            headers: dict[str, str] = {}
            while (line := await reader.readline()) not in (b"\r\n", b""):
                key, _, value = line.decode().partition(":")
                headers[key.strip().lower()] = value.strip()
            payload = await reader.readexactly(int(headers["content-length"]))
    finally:
        writer.close()
    return int(status_line.split()[1]), orjson.loads(payload)


def _head(method: str, path: str, extra: str) -> str:
    return (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\n{extra}\r\n"
    )


async def test_bodies_over_the_bound_are_refused_413_before_they_are_read(
    tmp_path: Path, database_url: str
) -> None:
    """reliability.md "Bounds": a 100 MB Content-Length is refused on its head alone; a chunked
    body is refused as soon as the chunks read pass OPENWORK_MAX_BODY_BYTES; nothing written."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env={"OPENWORK_MAX_BODY_BYTES": "65536"}
    )
    try:
        before = await _counts(database_url)
        status, body = await _raw_exchange(
            daemon.url, _head("POST", "/v1/sessions", f"Content-Length: {100 * MIB}\r\n"), b"{"
        )
        assert (status, _code(body)) == (413, "payload_too_large")
        chunk = b"a" * 16384
        chunked = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(8))  # 128 KiB
        status, body = await _raw_exchange(
            daemon.url, _head("POST", "/v1/sessions", "Transfer-Encoding: chunked\r\n"), chunked
        )
        assert (status, _code(body)) == (413, "payload_too_large")
        assert await _counts(database_url) == before
        async with daemon.client() as client:  # a body within the bound is served as before
            fits = await client.post("/v1/sessions", json={"workspace": str(workspace)})
            assert fits.status_code == 201
    finally:
        assert await daemon.stop() == 0


def _urllib_post(url: str, body: bytes) -> tuple[int, dict[str, object]]:
    """Python's urllib: writes the whole body, then reads the answer."""
    request = urllib.request.Request(
        f"{url}/v1/sessions",
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, orjson.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, orjson.loads(refused.read())


async def test_a_client_that_sends_the_whole_oversize_body_before_reading_still_reads_the_413(
    tmp_path: Path, database_url: str
) -> None:
    """Issue 25 point 6, reliability.md "Bounds": after answering 413 the daemon reads and
    discards the rest of the body (a lingering close, as nginx does), so urllib and a raw socket
    that write an 8 MiB body in full before reading see 413 ``payload_too_large``, not a
    connection reset; nothing is written and the daemon serves the next request."""
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env={"OPENWORK_MAX_BODY_BYTES": "65536"}
    )
    oversize = b'{"workspace": "' + b"a" * (8 * MIB) + b'"}'
    try:
        before = await _counts(database_url)
        status, body = await asyncio.to_thread(_urllib_post, daemon.url, oversize)
        assert (status, _code(body)) == (413, "payload_too_large")
        head = _head("POST", "/v1/sessions", f"Content-Length: {len(oversize)}\r\n")
        status, body = await _raw_exchange(daemon.url, head, oversize)
        assert (status, _code(body)) == (413, "payload_too_large")
        assert await _counts(database_url) == before
        async with daemon.client() as client:
            assert (await client.get("/v1/health")).status_code == 200
    finally:
        assert await daemon.stop() == 0


def _code(body: dict[str, object]) -> object:
    error = body.get("error")
    return error.get("code") if isinstance(error, dict) else None
