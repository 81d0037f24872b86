"""Pure renderings for ``openwork chat``: one line per tool call, the approval card, the turn's
outcome. Values in, strings out (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass

import orjson
from pydantic import JsonValue

from openwork_core.cli.errors import ExitStatus
from openwork_core.cli.output import visible
from openwork_core.storage.records import TurnStatus

ARG_CHARS = 60
OUTCOME_CHARS = 80
_MAIN_ARGUMENT = {
    "bash": "command",
    "read": "path",
    "write": "path",
    "edit": "path",
    "list": "path",
    "grep": "pattern",
    "glob": "pattern",
}


def shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def short_arguments(name: str, arguments: JsonValue) -> str:
    """The argument a reader needs (bash's command, a file tool's path), else compact JSON.
    Arguments may arrive as the provider's JSON text."""
    if isinstance(arguments, str):
        text = arguments
        try:
            arguments = orjson.loads(text)
        except orjson.JSONDecodeError:
            return shorten(text, ARG_CHARS)
    if isinstance(arguments, dict):
        key = _MAIN_ARGUMENT.get(name)
        value = arguments.get(key) if key is not None else None
        if isinstance(value, str):
            return shorten(value, ARG_CHARS)
        if not arguments:
            return ""
    return shorten(orjson.dumps(arguments).decode(), ARG_CHARS)


def outcome_text(status: str, output: str, is_error: bool) -> str:
    """``ok`` / the status, with the result's last line when it is a bracketed status line
    (bash: ``[exit 1; duration 3 ms]``) or the first line of an error."""
    lines = [line for line in output.strip().splitlines() if line.strip()]
    last = lines[-1].strip() if lines else ""
    if last.startswith("[") and last.endswith("]"):
        return f"{status} {shorten(last, OUTCOME_CHARS)}"
    if is_error and lines:
        return f"{status}: {shorten(lines[0], OUTCOME_CHARS)}"
    return status


@dataclass(frozen=True, slots=True)
class ToolLine:
    mark: str
    name: str
    arguments: str
    outcome: str
    failed: bool

    def plain(self) -> str:
        args = f" {self.arguments}" if self.arguments else ""
        return f"{self.mark} {self.name}{args} -> {self.outcome}"


def tool_line(
    name: str, arguments: JsonValue, status: str, output: str, is_error: bool
) -> ToolLine:
    return ToolLine(
        mark="x" if is_error else "+",
        name=visible(name),
        arguments=visible(short_arguments(name, arguments)),
        outcome=visible(outcome_text(status, output, is_error)),
        failed=is_error,
    )


def card_lines(request: JsonValue) -> list[str]:
    """The approval card of a ``permission_requested`` update, for a terminal: what the user
    approves is shown as it is, controls included (``visible``)."""
    if not isinstance(request, dict):
        return ["approval requested"]
    card = request.get("card")
    card = card if isinstance(card, dict) else {}
    lines = [f"approval needed: {request.get('toolName', '?')} (mode {card.get('mode', '?')})"]
    command = card.get("command")
    if isinstance(command, str):
        lines.append(f"  command: {command}")
    danger = card.get("danger")
    if isinstance(danger, dict):
        lines.append(f"  danger: {danger.get('key', '?')}")
    justification = card.get("justification")
    if isinstance(justification, str):
        lines.append(f"  why: {justification}")
    paths = card.get("paths")
    for path in paths if isinstance(paths, list) else []:
        if isinstance(path, dict):
            lines.append(f"  path: {path.get('path')} ({path.get('access')}, {path.get('scope')})")
    previous = card.get("previousDenial")
    if isinstance(previous, str):
        lines.append(f"  previous denial: {shorten(previous, OUTCOME_CHARS)}")
    return [visible(line) for line in lines]


@dataclass(frozen=True, slots=True)
class TurnResult:
    status: TurnStatus
    code: str | None
    message: str | None

    @property
    def exit_code(self) -> int:
        """0 completed; 130 cancelled (as for Ctrl-C); 1 failed or interrupted."""
        if self.status is TurnStatus.COMPLETED:
            return ExitStatus.OK
        if self.status is TurnStatus.CANCELLED:
            return ExitStatus.INTERRUPTED
        return ExitStatus.FAILED


def wire_status(value: JsonValue) -> TurnStatus:
    """A turn's ``status`` as the daemon sent it; anything else counts as failed."""
    try:
        return TurnStatus(str(value))
    except ValueError:
        return TurnStatus.FAILED


def turn_result(outcome: JsonValue) -> TurnResult:
    if not isinstance(outcome, dict):
        return TurnResult(TurnStatus.FAILED, "unknown_outcome", None)
    status = wire_status(outcome.get("status"))
    code = outcome.get("code")
    message = outcome.get("message")
    return TurnResult(
        status,
        str(code) if code is not None else None,
        str(message) if message is not None else None,
    )
