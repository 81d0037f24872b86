"""``openwork chat [MESSAGE]``: one turn (or an interactive prompt) in this folder's session,
streamed from the daemon's events: the assistant's text as it arrives, one line per tool call,
live bash output, approval cards, a spinner while the model thinks. Ctrl-C cancels the turn; a
second Ctrl-C exits."""

from __future__ import annotations

import contextlib
import sys
import uuid
from pathlib import Path
from types import ModuleType

from pydantic import JsonValue
from rich.console import Console
from rich.status import Status
from rich.text import Text

from openwork_core.cli.chat_view import ToolLine, TurnResult, card_lines, tool_line, turn_result
from openwork_core.cli.client import ApiError, DaemonClient, EventStream, objects
from openwork_core.cli.errors import CliError

EXIT_INTERRUPTED = 130
HISTORY_FILE = "chat_history"


class SecondInterrupt(Exception):
    """The user pressed Ctrl-C again while the turn was being cancelled."""


def latest_in(sessions: list[dict[str, JsonValue]], folder: Path) -> str | None:
    """The id of the folder's session with the latest activity, if any."""
    mine = [s for s in sessions if Path(str(s.get("workspace"))).resolve() == folder]
    if not mine:
        return None
    latest = max(mine, key=lambda s: str(s.get("last_activity_at") or s.get("created_at")))
    return str(latest.get("session_id"))


def pick_session(client: DaemonClient, folder: Path, *, new: bool, session_id: str | None) -> str:
    """``--session`` as given; else this folder's latest session unless ``--new``; else a new one."""
    if session_id is not None:
        client.get(f"/v1/sessions/{session_id}")
        return session_id
    if not new:
        latest = latest_in(objects(client.get("/v1/sessions"), "sessions"), folder)
        if latest is not None:
            return latest
    created = client.post("/v1/sessions", {"workspace": str(folder)})
    assert isinstance(created, dict)
    return str(created["session_id"])


class TurnPrinter:
    """Follows one turn's updates and writes them; ``plain`` drops colour and the spinner."""

    def __init__(
        self, client: DaemonClient, session_id: str, out: Console, *, plain: bool, approve: bool
    ) -> None:
        self._client = client
        self._sid = session_id
        self._out = out
        self._plain = plain
        self._approve = approve
        self._status: Status | None = None
        self._line_open = False
        self._progress_line_open = False
        self._calls: dict[str, tuple[str, JsonValue]] = {}
        self._warned: set[str] = set()
        """Warning codes already printed (issue 24: each once per chat, in one line)."""

    # -- the turn ----------------------------------------------------------------------------
    def run(self, text: str) -> TurnResult:
        stream = self._client.events(self._sid).open()
        try:
            accepted = self._client.post(
                f"/v1/sessions/{self._sid}/turns",
                {
                    "client_request_id": f"cli-{uuid.uuid4().hex}",
                    "input": [{"type": "text", "text": text}],
                },
            )
            assert isinstance(accepted, dict)
            turn_id = str(accepted["turn_id"])
            self._spin("thinking…")
            return self._follow(stream, turn_id)
        finally:
            self._stop_spinner()
            self._end_line()
            stream.close()

    def _follow(self, stream: EventStream, turn_id: str) -> TurnResult:
        cancelling = False
        while True:
            try:
                envelope = stream.next_envelope()
                if envelope is None:
                    return self._read_turn(turn_id)
                if envelope.get("turnId") != turn_id:
                    continue
                update = envelope.get("update")
                if not isinstance(update, dict):
                    continue
                result = self._on_update(turn_id, update)
                if result is not None:
                    return result
            except KeyboardInterrupt:
                if cancelling:
                    raise SecondInterrupt() from None
                cancelling = True
                try:
                    self._cancel(turn_id)
                except KeyboardInterrupt:
                    raise SecondInterrupt() from None

    def _cancel(self, turn_id: str) -> None:
        self._stop_spinner()
        self._end_line()
        self._note("cancelling the turn… (Ctrl-C again to quit)")
        with contextlib.suppress(ApiError):
            self._client.post(f"/v1/sessions/{self._sid}/turns/{turn_id}/cancel", {})

    def _read_turn(self, turn_id: str) -> TurnResult:
        turn = self._client.get(f"/v1/sessions/{self._sid}/turns/{turn_id}")
        assert isinstance(turn, dict)
        status = str(turn.get("status"))
        if status == "running":
            raise CliError("the event stream ended while the turn runs", "events_broken")
        code, message = turn.get("error_code"), turn.get("message")
        return TurnResult(
            status, str(code) if code else None, str(message) if message is not None else None
        )

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
        elif kind == "resync":
            turn = self._read_turn_if_done(turn_id)
            if turn is not None:
                return turn
        return None

    def _read_turn_if_done(self, turn_id: str) -> TurnResult | None:
        turn = self._client.get(f"/v1/sessions/{self._sid}/turns/{turn_id}")
        if isinstance(turn, dict) and turn.get("status") != "running":
            return self._read_turn(turn_id)
        return None

    # -- pieces ------------------------------------------------------------------------------
    def _text(self, delta: str) -> None:
        if not delta:
            return
        self._end_progress()
        self._out.file.write(delta)
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
            self._out.file.write(piece)
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
        with contextlib.suppress(ApiError):  # the turn may have ended meanwhile
            self._client.post(
                f"/v1/sessions/{self._sid}/turns/{turn_id}/permissions/{tool_call_id}",
                {"decision": decision},
            )

    def _decide(self) -> str:
        if self._approve:
            self._note("allowed once (--yes)")
            return "allow_once"
        if not sys.stdin.isatty():
            self._note("denied: no terminal to ask (pass --yes to allow)")
            return "deny"
        answer = input("allow once? [y/N] ").strip().lower()
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
        self._out.print(text, markup=False, style=None if self._plain else "dim")

    def _spin(self, label: str) -> None:
        if self._plain:
            return
        if self._status is None:
            self._end_line()
            self._status = self._out.status(label)
            self._status.start()
        else:
            self._status.update(label)

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


def report(result: TurnResult, err: Console) -> int:
    if result.status != "completed":
        detail = f": {result.message}" if result.message else ""
        code = result.code or result.status
        err.print(f"turn {result.status} ({code}){detail}", markup=False)
    return result.exit_code


def interactive(printer: TurnPrinter, err: Console, home: Path) -> int:
    """A prompt with history (readline) until Ctrl-D, ``/exit`` or Ctrl-C at the prompt."""
    tty = sys.stdin.isatty()
    history = home / HISTORY_FILE
    readline = _readline(history) if tty else None
    try:
        while True:
            try:
                text = input("› " if tty else "")
            except EOFError:
                return 0
            except KeyboardInterrupt:
                err.print()
                return 0
            if text.strip() in ("/exit", "/quit"):
                return 0
            if not text.strip():
                continue
            try:
                report(printer.run(text), err)
            except SecondInterrupt:
                return EXIT_INTERRUPTED
    finally:
        if readline is not None:
            with contextlib.suppress(OSError):
                history.parent.mkdir(parents=True, exist_ok=True)
                readline.write_history_file(str(history))


def _readline(history: Path) -> ModuleType | None:
    try:
        import readline
    except ImportError:
        return None
    with contextlib.suppress(OSError):
        readline.read_history_file(str(history))
    return readline
