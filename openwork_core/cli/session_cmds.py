"""``openwork chat``, ``openwork sessions`` and ``openwork inspect``: clients of the daemon."""

from __future__ import annotations

import sys
import webbrowser
from pathlib import Path
from urllib.parse import quote

import typer
from pydantic import JsonValue
from rich.table import Table

from openwork_core.cli.chat import SecondInterrupt
from openwork_core.cli.chat_session import ChatSession, latest_in
from openwork_core.cli.client import connect, home, objects
from openwork_core.cli.errors import CliError, ExitStatus, exit_status_help
from openwork_core.cli.inspect_view import inspection_lines, read_inspection
from openwork_core.cli.output import (
    console,
    err_console,
    plain_output,
    print_json,
    tsv_lines,
    visible,
)
from openwork_tools.modes import SandboxMode

JSON_OPTION = typer.Option(False, "--json", help="Print the daemon's JSON answer.")
MODE_OPTION = typer.Option(
    None, "--mode", help="The permission mode of the session.", case_sensitive=False
)


def register(app: typer.Typer) -> None:
    app.command(epilog=exit_status_help())(chat)
    app.command()(sessions)
    app.command()(inspect)


def chat(
    message: str | None = typer.Argument(None, help="One message; without it, a prompt."),
    new: bool = typer.Option(False, "--new", help="Start a new session in this folder."),
    session: str | None = typer.Option(None, "--session", "-s", help="Continue this session."),
    model: str | None = typer.Option(
        None, "--model", "-m", help="The model of the session (a new one, or switched)."
    ),
    mode: SandboxMode | None = MODE_OPTION,
    yes: bool = typer.Option(False, "--yes", "-y", help="Allow every approval card once."),
) -> None:
    """Talk to the agent in this folder.

    Continues the folder's latest session, or starts one. Streams the answer and one line per tool call. Text typed while a turn runs steers it
    (a slash command waits until the turn ends); /help lists the slash commands. Ctrl-C cancels
    the turn, a second Ctrl-C exits."""
    folder = Path.cwd().resolve()
    out, err = console(), err_console()
    with connect() as client:
        conversation = ChatSession(
            client,
            folder,
            out,
            err,
            plain=plain_output(),
            approve=yes,
            model=model,
            mode=mode.value if mode is not None else None,
        )
        conversation.open(new=new, session_id=session)
        try:
            if message is not None:
                raise typer.Exit(conversation.one_shot(message))
            raise typer.Exit(conversation.interactive(home()))
        except SecondInterrupt:
            err.print("interrupted", markup=False)
            raise typer.Exit(ExitStatus.INTERRUPTED) from None


def _sessions(listed: JsonValue) -> list[dict[str, JsonValue]]:
    return objects(listed, "sessions")


def _cell(value: JsonValue) -> str:
    return "" if value is None else str(value)


def sessions(json_output: bool = JSON_OPTION) -> None:
    """List sessions: id, title, folder, last activity, status."""
    with connect() as client:
        listed = client.get("/v1/sessions")
    if json_output:
        print_json(listed)
        return
    rows = sorted(
        _sessions(listed),
        key=lambda s: _cell(s.get("last_activity_at") or s.get("created_at")),
        reverse=True,
    )
    header = ["id", "title", "folder", "last activity", "status"]
    cells = [
        [
            _cell(s.get("session_id")),
            _cell(s.get("title")),
            _cell(s.get("workspace")),
            _cell(s.get("last_activity_at") or s.get("created_at"))[:19].replace("T", " "),
            _cell(s.get("status")),
        ]
        for s in rows
    ]
    out = console()
    if plain_output():
        sys.stdout.write("".join(line + "\n" for line in tsv_lines(header, cells)))
        return
    if not cells:
        out.print("no sessions yet: run `openwork chat` in a project folder", style="dim")
        return
    table = Table(*header, box=None, header_style="bold")
    for row in cells:
        table.add_row(*(visible(cell) for cell in row))  # tsv_lines does the same for plain
    out.print(table)


def context_page_url(daemon_url: str, token: str, session: str) -> str:
    """The context page of ``session`` with the token in the URL fragment (issue 16 point 4)."""
    return f"{daemon_url}/ui/#token={quote(token, safe='')}&session={quote(session, safe='')}"


def inspect(
    session: str | None = typer.Argument(None, help="Session id; default: this folder's latest."),
    json_output: bool = JSON_OPTION,
    open_page: bool = typer.Option(
        False, "--open", help="Open the context page (/ui/) in a browser; prints its URL."
    ),
) -> None:
    """Show a session's context window.

    The session: the one given, else this folder's latest. System / Conversation / Tools / free against the window, the auto-compact line, World State
    by section, the largest items."""
    with connect() as client:
        if session is None:
            folder = Path.cwd().resolve()
            session = latest_in(_sessions(client.get("/v1/sessions")), folder)
            if session is None:
                raise CliError(f"no session in {folder}; pass a session id", "no_session")
        body = client.get(f"/v1/sessions/{session}/context")
        page = context_page_url(client.discovery.url, client.discovery.token, session)
    if open_page:
        print(page)  # the token travels in the fragment: never sent to a server, never logged
        webbrowser.open(page)
        return
    if json_output:
        print_json(body)
        return
    out = console()
    for line in inspection_lines(session, read_inspection(body)):
        out.print(visible(line), markup=False, highlight=False)
