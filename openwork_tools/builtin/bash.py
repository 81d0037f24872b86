"""``bash``: one command in a fresh ``/bin/bash -c`` inside the bubblewrap sandbox
(tools.md §5, §7 bash; permissions-sandbox.md §2, §6)."""

from __future__ import annotations

import asyncio
import codecs
import enum
import os
import signal
import time
from asyncio.subprocess import Process

from pydantic import Field

from openwork_tools.builtin.live_output import LiveOutput, StreamKind
from openwork_tools.builtin.output import OutputBuffer
from openwork_tools.context import ToolCallContext, ToolSessionContext
from openwork_tools.definition import RiskHint, Tool
from openwork_tools.faults import faultpoint
from openwork_tools.policy import Actor
from openwork_tools.prepared import PreparedCall, normalise_escalation
from openwork_tools.results import ToolErrorCode, ToolResult, ToolStatus
from openwork_tools.sandbox.danger import detect_danger
from openwork_tools.sandbox.launch import SandboxStart, spawn
from openwork_tools.sandbox.limits import LimitHit, limit_text, limits_hit
from openwork_tools.schema import EscalationInput
from openwork_tools.spill import SpillFile

DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 120_000
KILL_WAIT_S = 10.0
READER_GRACE_S = 10.0
KERNEL_DENIAL = ("operation not permitted", "read-only file system")

DESCRIPTION = (
    "Run a shell command with /bin/bash -c in the sandbox, from the workspace root, in a fresh "
    "shell each call. stdout and stderr are merged; long output keeps the first 2 KB and the "
    "last 14 KB. timeoutMs defaults to 30000 (max 120000). Foreground only."
)


class BashInput(EscalationInput):
    command: str = Field(min_length=1, description="The command, run by /bin/bash -c.")
    timeout_ms: int = Field(
        default=DEFAULT_TIMEOUT_MS, description="Timeout in milliseconds, clamped to 1-120000."
    )


def unavailable_text(reason: str | None) -> str:
    """The fixed text of permissions-sandbox.md §2."""
    return (
        f"[sandbox: unavailable, so bash cannot run commands in this session ({reason or 'unknown'})."
        " File tools still work; ask the user to run the command in their own terminal if it is "
        "needed.]"
    )


def denial_marker(mode_display: str) -> str:
    """The two lines appended after a kernel denial (permissions-sandbox.md §6)."""
    return (
        f"[sandbox: file access denied under {mode_display} mode]\n"
        "[sandbox: to proceed, retry this exact command once with sandboxPermissions listing "
        "only the paths it needs, and a one-sentence justification; the user will be asked. "
        "If the paths cannot be listed, ask the user to run the command instead]"
    )


class Outcome(enum.Enum):
    EXITED = "exited"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"
    UNKNOWN = "unknown"


async def _pump(
    stream: asyncio.StreamReader | None,
    buffer: OutputBuffer,
    live: LiveOutput,
    kind: StreamKind,
) -> None:
    if stream is None:
        return
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # progress chunks
    while chunk := await stream.read(65536):
        await buffer.add(chunk)
        live.add(kind, decoder.decode(chunk))


async def terminate(proc: Process) -> bool:
    """SIGKILL the whole process group, then wait; ESRCH counts as terminated (tools.md §5)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except OSError:
        return False
    try:
        async with asyncio.timeout(KILL_WAIT_S):
            await proc.wait()
    except TimeoutError:
        return False
    return True


async def _cancel_when_set(cancel: asyncio.Event, task: asyncio.Task[object]) -> None:
    """The call's cancel token, turned into ``Task.cancel`` of the waiting task."""
    await cancel.wait()
    task.cancel()


async def wait_for_exit(proc: Process, cancel: asyncio.Event, timeout_s: float) -> Outcome:
    """Wait for the process to exit within ``timeout_s``. The cancel token cancels this wait
    (``Task.cancel``) and the outcome is CANCELLED; a cancellation from anyone else propagates."""
    task = asyncio.current_task()
    assert task is not None
    stopper = asyncio.get_running_loop().create_task(_cancel_when_set(cancel, task))
    try:
        async with asyncio.timeout(timeout_s):
            await proc.wait()
        return Outcome.EXITED
    except TimeoutError:
        return Outcome.TIMED_OUT
    except asyncio.CancelledError:
        if cancel.is_set() and task.uncancel() == 0:
            return Outcome.CANCELLED
        raise
    finally:
        stopper.cancel()
        await asyncio.gather(stopper, return_exceptions=True)


async def supervise(
    proc: Process, buffer: OutputBuffer, call: ToolCallContext, timeout_s: float
) -> Outcome:
    """Read both pipes (into the buffer and the live output) while waiting for the exit; a
    timeout or a cancel kills the process group. Whatever ends this — including a cancellation
    of the calling task — the process is killed and the reader tasks are cancelled and awaited.
    A ``timeout_s`` of 0 is a timeout already spent: the tree is killed, whatever it did."""
    live = LiveOutput(call)
    readers = [
        asyncio.create_task(_pump(proc.stdout, buffer, live, "stdout")),
        asyncio.create_task(_pump(proc.stderr, buffer, live, "stderr")),
    ]
    flusher = asyncio.create_task(live.run())
    faultpoint("bash_running")
    try:
        outcome = (
            await wait_for_exit(proc, call.cancel, timeout_s)
            if timeout_s > 0
            else Outcome.TIMED_OUT
        )
        if outcome is not Outcome.EXITED and not await terminate(proc):
            return Outcome.UNKNOWN
        # a background child may keep the pipes open: drain them for a bounded time
        await asyncio.wait(readers, timeout=READER_GRACE_S)
        return outcome
    finally:
        if proc.returncode is None:
            await terminate(proc)
        for task in (*readers, flusher):
            task.cancel()
        await asyncio.gather(*readers, flusher, return_exceptions=True)
        live.flush()


def _status_line(outcome: Outcome, proc: Process, timeout_ms: int, duration_ms: int) -> str:
    if outcome is Outcome.TIMED_OUT:
        return f"[timed out after {timeout_ms} ms; duration {duration_ms} ms]"
    if outcome is Outcome.CANCELLED:
        return f"[cancelled; duration {duration_ms} ms]"
    if outcome is Outcome.UNKNOWN:
        return f"[the command could not be confirmed stopped; duration {duration_ms} ms]"
    code = proc.returncode if proc.returncode is not None else -1
    if code < 0:
        return f"[killed by signal {-code}; duration {duration_ms} ms]"
    return f"[exit {code}; duration {duration_ms} ms]"


class BashTool(Tool[BashInput]):
    input_model = BashInput
    escalation = True

    def __init__(self) -> None:
        super().__init__("bash", DESCRIPTION, RiskHint.PROCESS_EXECUTION)

    def inspect(self, session: ToolSessionContext, tool_input: BashInput) -> PreparedCall:
        available = session.sandbox.available
        return PreparedCall(
            actor=Actor.PROCESS,
            command=tool_input.command,
            escalation=normalise_escalation(
                tool_input.sandbox_permissions, tool_input.justification, session
            ),
            danger=detect_danger(tool_input.command) if available else None,
        )

    async def execute(
        self, session: ToolSessionContext, call: ToolCallContext, tool_input: BashInput
    ) -> ToolResult:
        if not session.sandbox.available:
            return ToolResult.fail(
                ToolErrorCode.SANDBOX_UNAVAILABLE, unavailable_text(session.sandbox.reason)
            )
        timeout_ms = min(max(tool_input.timeout_ms, 1), MAX_TIMEOUT_MS)
        remaining = call.remaining()
        if remaining is not None and remaining * 1000 < timeout_ms:
            timeout_ms = max(1, int(remaining * 1000))
        buffer = OutputBuffer(SpillFile(session.spill_dir, call.call_id))
        started = time.monotonic()
        try:
            launched = await spawn(session, call.policy, tool_input.command, timeout_ms / 1000)
        except OSError as exc:
            return ToolResult.fail(
                ToolErrorCode.EXECUTION_FAILED, f"bash could not be started: {exc.strerror or exc}"
            )
        left_s = max(0.001, timeout_ms / 1000 - (time.monotonic() - started))
        if launched.start is SandboxStart.TIMED_OUT:
            left_s = 0.0  # the whole timeout went on the sandbox's setup: the command never ran
        try:
            outcome = await supervise(launched.proc, buffer, call, left_s)
        except BaseException:
            await asyncio.shield(buffer.close(keep=False))
            await asyncio.shield(launched.release())
            raise
        measured = await launched.release()
        duration_ms = int((time.monotonic() - started) * 1000)
        return await self._result(
            session, call, launched.proc, buffer, (outcome, measured), timeout_ms, duration_ms
        )

    async def _result(
        self,
        session: ToolSessionContext,
        call: ToolCallContext,
        proc: Process,
        buffer: OutputBuffer,
        ended: tuple[Outcome, frozenset[LimitHit]],
        timeout_ms: int,
        duration_ms: int,
    ) -> ToolResult:
        outcome, measured = ended
        keep = outcome in (Outcome.EXITED, Outcome.CANCELLED)
        output = buffer.render(keep_spill=keep)
        await buffer.close(keep=keep)
        code = proc.returncode
        if outcome is Outcome.EXITED and code not in (0, None) and output.startswith("bwrap: "):
            reason = output.strip().splitlines()[0]
            return ToolResult.fail(ToolErrorCode.SANDBOX_UNAVAILABLE, unavailable_text(reason))
        if output and not output.endswith("\n"):
            output += "\n"
        text = output + _status_line(outcome, proc, timeout_ms, duration_ms)
        capped = buffer.capped_text().lower()
        failed = outcome is Outcome.TIMED_OUT or (outcome is Outcome.EXITED and code != 0)
        for hit in limits_hit(capped, code, failed=failed, measured=measured):
            text += "\n" + limit_text(hit, session.settings)
        if outcome is Outcome.TIMED_OUT:
            return ToolResult.fail(ToolErrorCode.TIMEOUT, text, retryable=True)
        if outcome is Outcome.CANCELLED:
            return ToolResult.fail(ToolErrorCode.CANCELLED, text, status=ToolStatus.CANCELLED)
        if outcome is Outcome.UNKNOWN:
            return ToolResult.fail(
                ToolErrorCode.OUTCOME_UNKNOWN, text, status=ToolStatus.OUTCOME_UNKNOWN
            )
        denied = code not in (0, None) and any(marker in capped for marker in KERNEL_DENIAL)
        if denied:
            text += "\n" + denial_marker(call.policy.mode.display)
        return ToolResult.ok(text, sandbox_denied=denied)
