"""The stdio transport of an MCP client (issue 27 point 2); streamable HTTP is the SDK's.

The SDK's own stdio transport reads a line of any length into memory and copies the server's
stderr to the daemon's; this one (the SDK's ``Transport`` contract: an async context manager of a
read and a write stream) bounds every message at ``MAX_MESSAGE_BYTES`` (a longer one ends the
connection: a hostile server cannot make the daemon buffer without end), keeps only the last
``STDERR_LINES`` lines of stderr (the ``reason`` of a failed server), starts the server in its
own session (process group) and ends it like the SDK does: stdin closed, then SIGTERM to the
group after ``EXIT_GRACE_S``, then SIGKILL. ``ProcessWatch.exited`` is set when its stdout ends."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import anyio
import mcp_types as mcp
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from openwork_core.mcp.launch import StdioLaunch
from openwork_tools.sandbox.bwrap import SECCOMP_FD_ARG
from openwork_tools.sandbox.seccomp import program_descriptor

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
STDERR_LINES = 20
STDERR_LINE_CHARS = 400
EXIT_GRACE_S = 2.0
STREAM_BUFFER = 32

Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]
]


@dataclass(slots=True)
class ProcessWatch:
    """What the supervisor learns of one server process."""

    exited: asyncio.Event = field(default_factory=asyncio.Event)
    problem: str | None = None
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_LINES))
    returncode: int | None = None

    def describe(self) -> str:
        parts = [self.problem or "the server's output ended"]
        if self.returncode is not None:
            parts.append(f"exit status {self.returncode}")
        if self.stderr:
            parts.append(f"stderr: {self.stderr[-1]}")
        return "; ".join(parts)


async def _read_stdout(
    process: Process, send: MemoryObjectSendStream[SessionMessage | Exception], watch: ProcessWatch
) -> None:
    assert process.stdout is not None
    reader = BufferedByteReceiveStream(process.stdout)
    async with send:
        while True:
            try:
                line = await reader.receive_until(b"\n", MAX_MESSAGE_BYTES)
            except anyio.DelimiterNotFound:
                watch.problem = f"the server sent a message over {MAX_MESSAGE_BYTES} bytes"
                break
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError):
                break
            except (anyio.BrokenResourceError, OSError):
                break
            if not line.strip():
                continue
            try:
                item: SessionMessage | Exception = SessionMessage(
                    mcp.jsonrpc_message_adapter.validate_json(line)
                )
            except ValueError as exc:  # not JSON-RPC: the session reports it and goes on
                item = exc
            try:
                await send.send(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                break
    watch.exited.set()


async def _write_stdin(
    process: Process, receive: MemoryObjectReceiveStream[SessionMessage]
) -> None:
    assert process.stdin is not None
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        async with receive:
            async for item in receive:
                data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                await process.stdin.send(data.encode() + b"\n")


async def _read_stderr(process: Process, watch: ProcessWatch) -> None:
    assert process.stderr is not None
    reader = BufferedByteReceiveStream(process.stderr)
    ended = (anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError)
    with contextlib.suppress(*ended, anyio.BrokenResourceError, OSError):
        while True:
            try:
                line = await reader.receive_until(b"\n", STDERR_LINE_CHARS)
            except anyio.DelimiterNotFound:  # a long line: its start, then skip on
                line = await reader.receive(STDERR_LINE_CHARS)
            text = line.decode(errors="replace").strip()
            if text:
                watch.stderr.append(text[:STDERR_LINE_CHARS])


def _signal_group(process: Process, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


async def _stop(process: Process, watch: ProcessWatch) -> None:
    if process.stdin is not None:
        with contextlib.suppress(Exception):
            await process.stdin.aclose()
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            _signal_group(process, sig)
        with anyio.move_on_after(EXIT_GRACE_S):
            watch.returncode = await process.wait()
            _signal_group(process, signal.SIGKILL)  # what the server left in its group
            return


@contextlib.asynccontextmanager
async def stdio_transport(launch: StdioLaunch, watch: ProcessWatch) -> AsyncIterator[Streams]:
    fds: tuple[int, ...] = ()
    argv = list(launch.argv)
    if launch.seccomp is not None:
        fds = (await anyio.to_thread.run_sync(program_descriptor, launch.seccomp),)
        argv = [str(fds[0]) if arg == SECCOMP_FD_ARG else arg for arg in argv]
    try:
        process = await anyio.open_process(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=launch.cwd,
            env=dict(launch.env),
            start_new_session=True,
            pass_fds=fds,
        )
    finally:
        for fd in fds:
            os.close(fd)
    to_client, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](
        STREAM_BUFFER
    )
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage](STREAM_BUFFER)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_read_stdout, process, to_client, watch)
            group.start_soon(_write_stdin, process, from_client)
            group.start_soon(_read_stderr, process, watch)
            try:
                yield from_server, to_server
            finally:
                with anyio.CancelScope(shield=True):
                    await to_server.aclose()
                    await _stop(process, watch)
                group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                _signal_group(process, signal.SIGKILL)
                with anyio.move_on_after(EXIT_GRACE_S):
                    await process.wait()
            await from_server.aclose()
