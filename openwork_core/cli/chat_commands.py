"""What a line typed into ``openwork chat`` means: a slash command or a message (issue 25 point
8). Pure: lines in, commands and messages out."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

from openwork_tools.modes import SandboxMode

MODES = tuple(mode.value for mode in SandboxMode)

HELP: tuple[tuple[str, str], ...] = (
    ("/help", "this list"),
    ("/new", "start a new session in this folder (same --model and --mode)"),
    ("/mode [auto|accept_edits]", "show or set the session's permission mode"),
    ("/model [NAME]", "show the session's model, or switch it from the next model call"),
    ("/inspect", "the session's context window (as `openwork inspect`)"),
    ("/quit", "leave (also /exit, Ctrl-D)"),
)
HELP_FOOTER = (
    "Text typed while a turn runs steers it (read at its next step); a command waits until "
    "the turn ends. "
    "Start a line with // to send a message that begins with /."
)


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    """Without the slash, lower case: ``help``, ``new``, …"""
    argument: str


@dataclass(frozen=True, slots=True)
class Message:
    text: str


def parse(line: str) -> Command | Message | None:
    """A line of the prompt: None when blank; ``/name argument`` a command; ``//text`` the
    message ``/text``; anything else a message, as typed."""
    stripped = line.strip()
    if not stripped:
        return None
    if stripped.startswith("//"):
        return Message(stripped[1:])
    if stripped.startswith("/"):
        name, _, argument = stripped[1:].partition(" ")
        return Command(name.lower(), argument.strip())
    return Message(line)


def batches(lines: list[str]) -> list[Command | Message]:
    """Lines typed during a turn, in order: each command alone, the lines between commands one
    message (joined with newlines)."""
    items: list[Command | Message] = []
    for line in lines:
        item = parse(line)
        if item is None:
            continue
        last = items[-1] if items else None
        if isinstance(item, Message) and isinstance(last, Message):
            items[-1] = Message(f"{last.text}\n{item.text}")
        else:
            items.append(item)
    return items


def help_lines() -> list[str]:
    width = max(len(usage) for usage, _ in HELP)
    return [f"  {usage:<{width}}  {what}" for usage, what in HELP] + [HELP_FOOTER]


def model_label(session: JsonValue, providers: JsonValue) -> str:
    """The model a session's next turn uses: its own, or its provider's first (the default)."""
    if not isinstance(session, dict):
        return "unknown"
    provider_id = session.get("provider")
    model = session.get("model")
    if isinstance(model, str):
        return f"{model} (provider {provider_id})"
    listed = providers.get("providers") if isinstance(providers, dict) else None
    for provider in listed if isinstance(listed, list) else []:
        if isinstance(provider, dict) and provider.get("id") == provider_id:
            models = provider.get("models")
            if isinstance(models, list) and models and isinstance(models[0], dict):
                return f"{models[0].get('name')} (provider {provider_id}'s default)"
    return f"the default model of provider {provider_id}"
