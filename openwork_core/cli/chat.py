"""One turn of ``openwork chat``, followed from the daemon's events: the assistant's text as it
arrives, one line per tool call, live bash output, approval cards, a spinner while the model
thinks; text typed meanwhile is kept, never echoed (``cli/typeahead.py``). Ctrl-C cancels the
turn; a second Ctrl-C exits; a daemon that stops ends it as a cancel does. The conversation
around the turns (session, slash commands, what was typed): ``cli/chat_session.py``."""

from __future__ import annotations

import contextlib
import queue
import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import FrameType

from pydantic import JsonValue
from rich.console import Console
from rich.status import Status
from rich.text import Text

from openwork_core.cli.chat_commands import Message, parse
from openwork_core.cli.chat_view import (
    OUTCOME_CHARS,
    ToolLine,
    TurnResult,
    card_lines,
    shorten,
    tool_line,
    turn_result,
    wire_status,
)
from openwork_core.cli.client import (
    ApiError,
    DaemonClient,
    DaemonNotRunning,
    EventStream,
    Inbox,
    StreamEnded,
)
from openwork_core.cli.errors import CliError, ExitStatus
from openwork_core.cli.output import visible
from openwork_core.cli.typeahead import Draft, TypeAhead, Typed
from openwork_core.storage.records import TurnStatus


class SecondInterrupt(Exception):
    """The user pressed Ctrl-C again while the turn was being cancelled."""


class DaemonStopped(CliError):
    """The daemon went away during the turn (``openwork stop``): it cancels running turns, so
    the turn ends as a cancel does."""

    exit_code = ExitStatus.INTERRUPTED

    def __init__(self) -> None:
        super().__init__(
            "the daemon stopped during the turn; it cancels running turns "
            "(`openwork serve` starts it again)",
            "daemon_stopped",
        )


class _Interrupt:
    """Ctrl-C, as put in a turn's inbox."""


INTERRUPT = _Interrupt()
REOPEN_ATTEMPTS = 5
REOPEN_FIRST_WAIT_S = 0.1
STOP_NOTICE_S = 5.0
"""How long chat waits, after a cancel it did not ask for, for the stream's end that says the
daemon is stopping."""


class Interrupts:
    """SIGINT while a turn runs. The first is put into the turn's inbox, so the cancel happens
    in order wherever the main thread was (starting the turn included); a second raises
    ``SecondInterrupt`` at once, wherever the main thread is. Inside ``asking()`` (a question on
    the terminal) the first raises ``KeyboardInterrupt`` instead, so ``input()`` returns."""

    def __init__(self, inbox: Inbox) -> None:
        self._inbox = inbox
        self.count = 0
        self._asking = False
        self._previous: object = None

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._on_interrupt)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]
            self._previous = None

    def _on_interrupt(self, _signum: int, _frame: FrameType | None) -> None:
        self.count += 1
        if self.count > 1:
            raise SecondInterrupt()
        if self._asking:
            raise KeyboardInterrupt()
        self._inbox.put(INTERRUPT)

    @contextlib.contextmanager
    def asking(self) -> Iterator[None]:
        self._asking = True
        try:
            yield
        finally:
            self._asking = False


@dataclass(slots=True)
class TypedDuringTurn:
    """What was typed during the last turn: finished lines waiting to be sent, the line left
    unfinished, and the lines sent to the turn as steers."""

    lines: list[str] = field(default_factory=list)
    draft: str = ""
    steered: list[str] = field(default_factory=list)


class TurnPrinter:
    """Follows one turn's updates and writes them; ``plain`` drops colour and the spinner. Text
    typed meanwhile (on a terminal) is kept in ``typed`` for the caller, never echoed."""

    def __init__(
        self, client: DaemonClient, session_id: str, out: Console, *, plain: bool, approve: bool
    ) -> None:
        self._client = client
        self.session_id = session_id
        self._out = out
        self._plain = plain
        self._approve = approve
        self._status: Status | None = None
        self._label = ""
        self._draft = ""
        self._line_open = False
        self._progress_line_open = False
        self._calls: dict[str, tuple[str, JsonValue]] = {}
        self._last_sequence: int | None = None
        self._keys: TypeAhead | None = None
        self._interrupts: Interrupts | None = None
        self.typed = TypedDuringTurn()
        self._warned: set[str] = set()
        """Warning codes already printed (issue 24: each once per chat, in one line)."""

    # -- the turn ----------------------------------------------------------------------------
    def run(self, text: str) -> TurnResult:
        self.typed = TypedDuringTurn()
        self._last_sequence = None
        self._draft = ""
        inbox: Inbox = queue.SimpleQueue()
        stream = self._client.events(self.session_id, inbox).open()
        try:
            with Interrupts(inbox) as interrupts, TypeAhead(inbox) as keys:
                self._interrupts, self._keys = interrupts, keys
                turn_id = self._start(text)
                self._spin("thinking…")
                result = self._follow(inbox, stream, turn_id)
            self._typed_after_the_end(inbox)
            self.typed.draft = keys.draft
            return result
        finally:
            self._interrupts = self._keys = None
            self._stop_spinner()
            self._end_line()
            stream.close()

    def _start(self, text: str) -> str:
        accepted = self._client.post(
            f"/v1/sessions/{self.session_id}/turns",
            {
                "client_request_id": f"cli-{uuid.uuid4().hex}",
                "input": [{"type": "text", "text": text}],
            },
        )
        assert isinstance(accepted, dict)
        return str(accepted["turn_id"])

    def _follow(self, inbox: Inbox, stream: EventStream, turn_id: str) -> TurnResult:
        cancelling = False
        reopened = 0
        while True:
            item = inbox.get()
            if item is INTERRUPT:
                if not cancelling:
                    cancelling = True
                    self._cancel(turn_id)
            elif isinstance(item, Typed):
                self._typed(item.text, None if cancelling else turn_id)
            elif isinstance(item, Draft):
                self._show_draft(item.text)
            elif isinstance(item, StreamEnded):
                stream.close()
                ended = self._turn_if_done(turn_id)
                if ended is not None:
                    if ended.status is TurnStatus.CANCELLED and not cancelling:
                        raise DaemonStopped()  # only a stopping actor ends both unasked
                    return ended
                stream = self._reopen(inbox, reopened, item.error)
                reopened += 1
            elif isinstance(item, dict):
                reopened = 0
                result = self._on_envelope(turn_id, item)
                if result is not None:
                    if (
                        result.status is TurnStatus.CANCELLED
                        and not cancelling
                        and self._stopping(inbox)
                    ):
                        raise DaemonStopped()
                    return result

    def _on_envelope(self, turn_id: str, envelope: dict[str, JsonValue]) -> TurnResult | None:
        sequence = envelope.get("sequence")
        update = envelope.get("update")
        kind = update.get("type") if isinstance(update, dict) else None
        if kind == "resync":  # what was missed is in the snapshot; only newer updates follow
            if isinstance(sequence, int):
                self._last_sequence = sequence
            return self._turn_if_done(turn_id)
        if kind == "stream_ended" and isinstance(update, dict):
            if update.get("reason") == "deleted":
                raise CliError("the session was deleted during the turn", "session_deleted")
            return None  # unloaded: the stream ends next and is opened again
        if isinstance(sequence, int):
            if self._last_sequence is not None and sequence <= self._last_sequence:
                return None  # replayed after a reopen: seen already
            self._last_sequence = sequence
        if envelope.get("turnId") != turn_id or not isinstance(update, dict):
            return None
        return self._on_update(turn_id, update)

    def _typed(self, text: str, turn_id: str | None = None) -> None:
        """A message typed while the turn runs is sent to it as a steer (issue 26 point 1: the
        model reads it at the turn's next step); one the turn no longer takes (409
        ``turn_not_active``: it just ended; or the turn is being cancelled) waits as the next
        message — a session runs one turn at a time (session-runtime.md §2). A slash command
        (``/exit``, ``/model …``) is never a steer: it runs when the turn ends."""
        self._end_line()
        item = parse(text)
        if item is None:
            return
        if turn_id is not None and isinstance(item, Message) and self._steer(turn_id, item.text):
            self.typed.steered.append(text)
            shown = shorten(item.text, OUTCOME_CHARS)
            self._note(f"steering: {shown} (read at the turn's next step)")
            return
        self.typed.lines.append(text)
        then = "sent" if isinstance(item, Message) else "run"
        self._note(f"queued: {shorten(text, OUTCOME_CHARS)} ({then} when this turn ends)")

    def _steer(self, turn_id: str, text: str) -> bool:
        try:
            self._client.post(
                f"/v1/sessions/{self.session_id}/turns/{turn_id}/steer",
                {
                    "client_request_id": f"cli-steer-{uuid.uuid4().hex}",
                    "input": [{"type": "text", "text": text}],
                },
            )
        except ApiError as error:
            if error.code == "turn_not_active":
                return False
            raise
        return True

    def _stopping(self, inbox: Inbox) -> bool:
        """A cancel nobody here asked for: a stopping daemon cancels its turns, then ends the
        stream at once with ``stream_ended`` (``unloaded``); another client's cancel ends
        nothing, so this waits at most ``STOP_NOTICE_S``."""
        deadline = time.monotonic() + STOP_NOTICE_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                item = inbox.get(timeout=left)
            except queue.Empty:
                return False
            if isinstance(item, StreamEnded):
                return True
            if isinstance(item, Typed):
                self._typed(item.text)
            elif isinstance(item, dict):
                update = item.get("update")
                if isinstance(update, dict) and update.get("type") == "stream_ended":
                    return update.get("reason") == "unloaded"
        return False

    def _turn_if_done(self, turn_id: str) -> TurnResult | None:
        """The turn's outcome once it is no longer running. A daemon that answers no more
        stopped (`openwork stop` ends the streams, stops listening, then cancels the turns):
        the turn ends as a cancel does."""
        try:
            turn = self._client.get(f"/v1/sessions/{self.session_id}/turns/{turn_id}")
        except DaemonNotRunning:
            raise DaemonStopped() from None
        if not isinstance(turn, dict):
            return None
        status = wire_status(turn.get("status"))
        if status is TurnStatus.RUNNING:
            return None
        code, message = turn.get("error_code"), turn.get("message")
        return TurnResult(
            status,
            str(code) if code else None,
            str(message) if message is not None else None,
        )

    def _typed_after_the_end(self, inbox: Inbox) -> None:
        """Lines the key reader finished while the turn's end was being read (it has stopped
        now): queued like the others, not lost."""
        while True:
            try:
                item = inbox.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, Typed):
                self._typed(item.text)

    def _reopen(self, inbox: Inbox, attempts: int, error: CliError | None) -> EventStream:
        """The stream ended before the turn did: follow on after the last update seen, after a
        short back-off; a daemon that no longer listens stopped."""
        if attempts >= REOPEN_ATTEMPTS:
            raise error or CliError("the event stream keeps ending", "events_broken")
        time.sleep(REOPEN_FIRST_WAIT_S * 2**attempts)  # back-off before asking the daemon again
        try:
            return self._client.events(self.session_id, inbox, after=self._last_sequence).open()
        except DaemonNotRunning:
            raise DaemonStopped() from None

    def _cancel(self, turn_id: str) -> None:
        self._stop_spinner()
        self._end_line()
        self._note("cancelling the turn… (Ctrl-C again to quit)")
        with contextlib.suppress(ApiError):
            self._client.post(f"/v1/sessions/{self.session_id}/turns/{turn_id}/cancel", {})

    def _on_update(self, turn_id: str, update: dict[str, JsonValue]) -> TurnResult | None:
        kind = update.get("type")
        if kind == "text_delta":
            self._stop_spinner()
            self._text(str(update.get("delta", "")))
        elif kind == "phase_changed" and update.get("phase") == "running_model":
            self._spin("thinking…")
        elif kind == "tool_call_started":
            call = update.get("toolCall")
            if isinstance(call, dict):
                name = str(call.get("name"))
                self._calls[str(call.get("toolCallId"))] = (name, call.get("input"))
                self._end_line()
                self._spin(f"running {name}…")
        elif kind == "tool_call_progress":
            self._progress(update.get("progress"))
        elif kind == "tool_call_finished":
            self._finished(update)
        elif kind == "permission_requested":
            self._permission(turn_id, update.get("request"))
        elif kind == "warning":
            self._warning(update)
        elif kind == "turn_finished":
            return turn_result(update.get("outcome"))
        return None

    # -- pieces ------------------------------------------------------------------------------
    def _text(self, delta: str) -> None:
        if not delta:
            return
        self._end_progress()
        self._out.file.write(visible(delta))
        self._out.file.flush()
        self._line_open = not delta.endswith("\n")

    def _progress(self, progress: JsonValue) -> None:
        if not isinstance(progress, dict):
            return
        chunk = progress.get("chunk") or progress.get("message")
        if not isinstance(chunk, str) or not chunk:
            return
        self._stop_spinner()
        self._end_line()
        for piece in chunk.splitlines(keepends=True):
            if not self._progress_line_open:
                self._out.file.write("  | ")
            self._out.file.write(visible(piece))
            self._progress_line_open = not piece.endswith("\n")
        self._out.file.flush()

    def _finished(self, update: dict[str, JsonValue]) -> None:
        self._stop_spinner()
        self._end_progress()
        self._end_line()
        call_id = str(update.get("toolCallId"))
        name, arguments = self._calls.pop(call_id, (str(update.get("toolName")), None))
        line = tool_line(
            name,
            arguments,
            str(update.get("status")),
            str(update.get("output") or ""),
            bool(update.get("isError")),
        )
        self._tool_line(line)

    def _tool_line(self, line: ToolLine) -> None:
        if self._plain:
            self._out.print(line.plain(), markup=False)
            return
        mark = Text("✗ " if line.failed else "✓ ", style="red" if line.failed else "green")
        body = Text(line.name, style="bold")
        if line.arguments:
            body.append(f" {line.arguments}")
        body.append(f"  {line.outcome}", style="dim")
        self._out.print(mark + body)

    def _permission(self, turn_id: str, request: JsonValue) -> None:
        self._stop_spinner()
        self._end_progress()
        self._end_line()
        for line in card_lines(request):
            self._out.print(line, markup=False, style=None if self._plain else "yellow")
        tool_call_id = request.get("toolCallId") if isinstance(request, dict) else None
        if not isinstance(tool_call_id, str):
            return
        decision = self._decide()
        if decision is None:  # Ctrl-C at the question: the turn is cancelled
            self._out.print()
            self._cancel(turn_id)
            return
        with contextlib.suppress(ApiError):  # the turn may have ended meanwhile
            self._client.post(
                f"/v1/sessions/{self.session_id}/turns/{turn_id}/permissions/{tool_call_id}",
                {"decision": decision},
            )

    def _decide(self) -> str | None:
        """``allow_once`` / ``deny``; None when Ctrl-C was pressed at the question."""
        if self._approve:
            self._note("allowed once (--yes)")
            return "allow_once"
        if not sys.stdin.isatty():
            self._note("denied: no terminal to ask (pass --yes to allow)")
            return "deny"
        keys, interrupts = self._keys, self._interrupts
        with (
            keys.suspended() if keys is not None else contextlib.nullcontext(),
            interrupts.asking() if interrupts is not None else contextlib.nullcontext(),
        ):
            try:
                answer = input("allow once? [y/N] ").strip().lower()
            except (KeyboardInterrupt, EOFError):
                return None
        return "allow_once" if answer in ("y", "yes") else "deny"

    def _warning(self, update: dict[str, JsonValue]) -> None:
        code = str(update.get("code"))
        if code in self._warned:
            return
        self._warned.add(code)
        self._stop_spinner()
        self._end_line()
        self._note(f"warning: {update.get('message')}")

    def _note(self, text: str) -> None:
        self._out.print(visible(text), markup=False, style=None if self._plain else "dim")

    def _show_draft(self, draft: str) -> None:
        """The line being typed, beside the spinner (where there is one)."""
        self._draft = draft
        if self._status is not None:
            self._status.update(self._spinner_text())

    def _spinner_text(self) -> str:
        return f"{self._label}  › {self._draft}" if self._draft else self._label

    def _spin(self, label: str) -> None:
        self._label = label
        if self._plain:
            return
        if self._status is None:
            self._end_line()
            self._status = self._out.status(self._spinner_text())
            self._status.start()
        else:
            self._status.update(self._spinner_text())

    def _stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def _end_line(self) -> None:
        self._end_progress()
        if self._line_open:
            self._out.file.write("\n")
            self._out.file.flush()
            self._line_open = False

    def _end_progress(self) -> None:
        if self._progress_line_open:
            self._out.file.write("\n")
            self._progress_line_open = False
