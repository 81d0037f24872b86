"""``openwork chat``'s conversation around the turns: which session (this folder's latest, a
new one, ``--session``), ``--model`` and ``--mode``, the slash commands, and the lines typed
during a turn that wait for its end: the commands, and what the turn no longer took as a steer
(issue 25 point 8, issue 26 point 1)."""

from __future__ import annotations

import contextlib
import sys
from collections import deque
from pathlib import Path
from types import ModuleType

from pydantic import JsonValue
from rich.console import Console

from openwork_core.cli.chat import TurnPrinter
from openwork_core.cli.chat_commands import (
    MODES,
    Command,
    Message,
    batches,
    help_lines,
    model_label,
    parse,
)
from openwork_core.cli.chat_view import OUTCOME_CHARS, TurnResult, shorten
from openwork_core.cli.client import ApiError, DaemonClient, objects
from openwork_core.cli.errors import CliError
from openwork_core.cli.inspect_view import inspection_lines, read_inspection
from openwork_core.cli.output import visible
from openwork_core.storage.records import TurnStatus

HISTORY_FILE = "chat_history"
PROMPT = "› "


class _Quit:
    """What ``/quit`` answers."""


QUIT = _Quit()


def latest_in(sessions: list[dict[str, JsonValue]], folder: Path) -> str | None:
    """The id of the folder's session with the latest activity, if any."""
    mine = [s for s in sessions if Path(str(s.get("workspace"))).resolve() == folder]
    if not mine:
        return None
    latest = max(mine, key=lambda s: str(s.get("last_activity_at") or s.get("created_at")))
    return str(latest.get("session_id"))


def switch_model(client: DaemonClient, session_id: str, model: str) -> str | None:
    """Sets the model of the session's next turns (``PATCH /v1/sessions/{sid}`` with
    ``model``); the daemon's reason when it refuses (a daemon without the session verbs of
    issue 26 refuses the field), else None."""
    try:
        client.request("PATCH", f"/v1/sessions/{session_id}", {"model": model})
    except ApiError as exc:
        if exc.status >= 500:
            raise
        return str(exc)
    return None


def report(result: TurnResult, err: Console) -> int:
    if result.status is not TurnStatus.COMPLETED:
        detail = f": {result.message}" if result.message else ""
        code = result.code or result.status
        err.print(visible(f"turn {result.status} ({code}){detail}"), markup=False)
    return result.exit_code


class ChatSession:
    """One ``openwork chat`` run: its session, its preferences, what waits to be sent."""

    def __init__(
        self,
        client: DaemonClient,
        folder: Path,
        out: Console,
        err: Console,
        *,
        plain: bool,
        approve: bool,
        model: str | None,
        mode: str | None,
    ) -> None:
        self._client = client
        self._folder = folder
        self._out = out
        self._err = err
        self._model = model
        self._mode = mode
        self._printer = TurnPrinter(client, "", out, plain=plain, approve=approve)
        self._waiting: deque[Command | Message] = deque()
        self._prefill = ""
        self._readline: ModuleType | None = None
        """The interactive prompt's history, while ``interactive`` runs on a terminal."""

    @property
    def session_id(self) -> str:
        return self._printer.session_id

    # -- the session -------------------------------------------------------------------------
    def open(self, *, new: bool, session_id: str | None) -> None:
        """``--session`` as given; else this folder's latest unless ``--new``; else a new one;
        then ``--mode`` and ``--model`` applied to it."""
        chosen = session_id
        if chosen is None and not new:
            sessions = objects(self._client.get("/v1/sessions"), "sessions")
            chosen = latest_in(sessions, self._folder)
        if chosen is None:
            self._create()
            return
        session = self._client.get(f"/v1/sessions/{chosen}")
        self._printer.session_id = chosen
        self._announce()
        assert isinstance(session, dict)
        if self._mode is not None and session.get("permission_mode") != self._mode:
            self._set_mode(self._mode)
        if self._model is not None and session.get("model") != self._model:
            refused = switch_model(self._client, chosen, self._model)
            if refused is not None:
                raise CliError(
                    f"session {chosen} cannot switch to model {self._model}: {refused}; "
                    "add --new to start a session on it",
                    "model_switch_refused",
                )

    def _create(self) -> None:
        body: dict[str, JsonValue] = {"workspace": str(self._folder)}
        if self._model is not None:
            body["model"] = self._model
        if self._mode is not None:
            body["permission_mode"] = self._mode
        created = self._client.post("/v1/sessions", body)
        assert isinstance(created, dict)
        self._printer.session_id = str(created["session_id"])
        self._announce()

    def _announce(self) -> None:
        self._err.print(f"session {self.session_id} in {self._folder}", markup=False, style="dim")

    def _set_mode(self, mode: str) -> None:
        self._client.request(
            "PUT", f"/v1/sessions/{self.session_id}/permission-mode", {"mode": mode}
        )

    # -- turns and what was typed during them ----------------------------------------------
    def say(self, text: str) -> int:
        """One turn; the lines typed during it wait, in order, to be handled next. After a
        cancel nothing is sent: what was typed comes back into the prompt (or is printed)."""
        result = self._printer.run(text)
        code = report(result, self._err)
        typed = self._printer.typed
        for steered in typed.steered:  # sent during the turn: in the history as if typed there
            self._remember(steered)
        if result.status is TurnStatus.CANCELLED:
            unsent = " ".join([*typed.lines, typed.draft]).strip()
            if unsent:
                self._prefill = unsent
        else:
            self._waiting.extend(batches(typed.lines))
            self._prefill = typed.draft
        return code

    def handle(self, item: Command | Message) -> int | _Quit:
        if isinstance(item, Message):
            return self.say(item.text)
        return self._command(item)

    def _command(self, command: Command) -> int | _Quit:
        name, argument = command.name, command.argument
        if name in ("quit", "exit"):
            return QUIT
        if name == "help":
            self._lines(help_lines())
        elif name == "new":
            self._create()
        elif name == "mode":
            self._mode_command(argument)
        elif name == "model":
            self._model_command(argument)
        elif name == "inspect":
            body = self._client.get(f"/v1/sessions/{self.session_id}/context")
            self._lines(inspection_lines(self.session_id, read_inspection(body)))
        else:
            self._note(
                f"unknown command /{name}: /help lists them (// sends a line beginning with /)"
            )
        return 0

    def _mode_command(self, mode: str) -> None:
        if not mode:
            session = self._client.get(f"/v1/sessions/{self.session_id}")
            current = session.get("permission_mode") if isinstance(session, dict) else None
            self._note(f"mode {current} (one of: {', '.join(MODES)})")
            return
        if mode not in MODES:
            self._note(f"no mode {mode}: one of {', '.join(MODES)}")
            return
        self._set_mode(mode)
        self._mode = mode
        self._note(f"mode {mode}, from the next tool call")

    def _model_command(self, model: str) -> None:
        if not model:
            session = self._client.get(f"/v1/sessions/{self.session_id}")
            self._note(f"model {model_label(session, self._client.get('/v1/providers'))}")
            return
        refused = switch_model(self._client, self.session_id, model)
        if refused is not None:
            self._note(
                f"the model stays as it was: the daemon refused the switch ({refused}); "
                f"`openwork chat --new --model {model}` starts a session on it"
            )
            return
        self._model = model
        self._note(f"model {model}, from the next model call")

    def _lines(self, lines: list[str]) -> None:
        for line in lines:
            self._out.print(visible(line), markup=False, highlight=False)

    def _note(self, text: str) -> None:
        self._err.print(visible(text), markup=False)

    # -- the two ways to chat ----------------------------------------------------------------
    def one_shot(self, message: str) -> int:
        """``chat MESSAGE``: the turn, then whatever was typed during it; the last turn's exit
        status."""
        code = self.say(message)
        while self._waiting:
            item = self._waiting.popleft()
            self._echo(item)
            outcome = self.handle(item)
            if outcome is QUIT:
                break
            assert isinstance(outcome, int)
            code = outcome
        if self._prefill:
            self._note(f"not sent: {shorten(self._prefill, OUTCOME_CHARS)}")
        return code

    def interactive(self, home: Path) -> int:
        """A prompt with history (readline) until Ctrl-D, ``/quit`` or Ctrl-C at the prompt."""
        tty = sys.stdin.isatty()
        history = home / HISTORY_FILE
        readline = self._readline = _readline(history) if tty else None
        try:
            while True:
                if self._waiting:
                    item: Command | Message | None = self._waiting.popleft()
                    assert item is not None
                    self._echo(item)
                else:
                    try:
                        line = _prompt(readline, PROMPT if tty else "", self._prefill)
                    except EOFError:
                        return 0
                    except KeyboardInterrupt:
                        self._err.print()
                        return 0
                    self._prefill = ""
                    item = parse(line)
                if item is not None and self.handle(item) is QUIT:
                    return 0
        finally:
            self._readline = None
            if readline is not None:
                with contextlib.suppress(OSError):
                    history.parent.mkdir(parents=True, exist_ok=True)
                    readline.write_history_file(str(history))

    def _echo(self, item: Command | Message) -> None:
        """A waiting line, as it is sent (so the transcript shows what went), and into the
        prompt's history as if typed there."""
        text = item.text if isinstance(item, Message) else f"/{item.name} {item.argument}"
        self._out.print(f"{PROMPT}{text.strip()}", markup=False, highlight=False)
        self._remember(text)

    def _remember(self, text: str) -> None:
        """``text`` into the interactive prompt's history (nothing outside ``interactive``)."""
        if self._readline is not None:
            for line in text.splitlines():
                self._readline.add_history(line)


def _prompt(readline: ModuleType | None, prompt: str, prefill: str) -> str:
    """``input()``, with ``prefill`` already typed when there is a readline."""
    if readline is None or not prefill:
        return input(prompt)
    readline.set_startup_hook(lambda: readline.insert_text(prefill))
    try:
        return input(prompt)
    finally:
        readline.set_startup_hook(None)


def _readline(history: Path) -> ModuleType | None:
    try:
        import readline
    except ImportError:
        return None
    with contextlib.suppress(OSError):
        readline.read_history_file(str(history))
    return readline
