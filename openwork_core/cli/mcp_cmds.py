"""``openwork mcp list | add | remove | test NAME`` (issue 27 point 5; docs/mcp.md "CLI"): the
daemon's MCP servers through its API. ``add`` is ``PUT /v1/mcp/servers/{name}`` (secret values
go to the daemon's 0600 key file, never to the database); ``test`` starts the server apart from
the daemon's own client, lists its tools with their token cost and calls nothing."""

from __future__ import annotations

import sys
from urllib.parse import quote

import typer
from pydantic import JsonValue

from openwork_core.cli.client import connect, objects
from openwork_core.cli.errors import CliError
from openwork_core.cli.output import console, print_json, tsv_lines, visible

ARG_OPTION = typer.Option(None, "--arg", help="One argument of the program (repeat).")
ENV_OPTION = typer.Option(None, "--env", help="NAME=VALUE in its environment (repeat).")
HEADER_OPTION = typer.Option(None, "--header", help="NAME=VALUE sent to it (repeat).")

mcp_app = typer.Typer(no_args_is_help=True, help="The MCP servers whose tools the model gets.")


def register(app: typer.Typer) -> None:
    app.add_typer(mcp_app, name="mcp")


def _path(name: str) -> str:
    return f"/v1/mcp/servers/{quote(name, safe='')}"


def _pairs(values: list[str], option: str) -> dict[str, JsonValue]:
    pairs: dict[str, JsonValue] = {}
    for value in values:
        key, sep, item = value.partition("=")
        if not sep or not key:
            raise CliError(f"{option} takes NAME=VALUE, not {value!r}", "usage")
        pairs[key] = item
    return pairs


def _print_servers(servers: list[dict[str, JsonValue]]) -> None:
    rows = []
    for server in servers:
        tools = objects(server, "tools")
        count = len(tools)
        tokens = sum(n for t in tools if isinstance(n := t.get("tokens"), int))
        rows.append(
            [
                str(server.get("name")),
                str(server.get("status")),
                str(server.get("transport")),
                str(count),
                str(tokens),
                str(server.get("reason") or ""),
            ]
        )
    _print_table(["name", "status", "transport", "tools", "tokens", "reason"], rows)


def _print_table(header: list[str], rows: list[list[str]]) -> None:
    """Tab-separated lines (a terminal shows them as a table too)."""
    sys.stdout.write("".join(line + "\n" for line in tsv_lines(header, rows)))


@mcp_app.command("list")
def list_servers(json_output: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Each server, its status, its tools' count and token cost."""
    with connect() as client:
        listed = client.get("/v1/mcp/servers")
    if json_output:
        print_json(listed)
        return
    _print_servers(objects(listed, "servers"))


@mcp_app.command("add")
def add(
    name: str,
    command: str | None = typer.Option(None, help="A stdio server's program."),
    arg: list[str] | None = ARG_OPTION,
    env: list[str] | None = ENV_OPTION,
    cwd: str | None = typer.Option(None, help="Its working directory (absolute)."),
    url: str | None = typer.Option(None, help="A streamable HTTP server's URL."),
    header: list[str] | None = HEADER_OPTION,
    bearer_token_env_var: str | None = typer.Option(
        None, help="The daemon's variable whose value is sent as a bearer token."
    ),
    approval: str = typer.Option("annotations", help="never, always or annotations."),
    no_sandbox: bool = typer.Option(False, "--no-sandbox", help="Run a stdio server unsandboxed."),
    tool_timeout: float = typer.Option(60.0, help="Seconds a call may take."),
    startup_timeout: float = typer.Option(10.0, help="Seconds the start may take."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Add (or replace) a server; the daemon starts it in the background."""
    body: dict[str, JsonValue] = {
        "approval": approval,
        "tool_timeout_seconds": tool_timeout,
        "startup_timeout_seconds": startup_timeout,
    }
    if command is not None:
        body |= {"command": command, "args": list(arg or []), "env": _pairs(env or [], "--env")}
        body |= {"sandbox": not no_sandbox} | ({"cwd": cwd} if cwd else {})
    if url is not None:
        body |= {"url": url, "headers": _pairs(header or [], "--header")}
        body |= {"bearer_token_env_var": bearer_token_env_var} if bearer_token_env_var else {}
    with connect() as client:
        stored = client.request("PUT", _path(name), body)
    if json_output:
        print_json(stored)
        return
    console().print(f"added {name} (the daemon starts it now)", markup=False)


@mcp_app.command("remove")
def remove(name: str) -> None:
    """Remove a server added with add (a server of the config file is changed there)."""
    with connect() as client:
        client.request("DELETE", _path(name))
    console().print(f"removed {name}", markup=False)


@mcp_app.command("test")
def try_server(
    name: str, json_output: bool = typer.Option(False, "--json", help="Print JSON.")
) -> None:
    """Start the server once, list its tools with their token cost; nothing is called."""
    with connect() as client:
        tested = client.post(f"{_path(name)}/test", None)
    if json_output:
        print_json(tested)
    server = objects({"servers": [tested]}, "servers")[0]
    if not json_output:
        out = console()
        if server.get("status") != "ready":
            out.print(visible(f"{name}: failed: {server.get('reason')}"), markup=False)
        else:
            tools = objects(server, "tools")
            _print_table(
                ["tool", "tokens"],
                [[str(t.get("advertised_as")), str(t.get("tokens"))] for t in tools],
            )
    if server.get("status") != "ready":
        raise typer.Exit(1)
