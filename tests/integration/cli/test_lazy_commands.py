"""``openwork serve`` starts the daemon without the typer command tree, and the tree builds a
command from its module only when that command runs (issue 13 §3: the daemon's start pays for
neither typer nor the client commands' HTTP client)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import typer

from openwork_core.cli.commands import COMMAND_MODULES, app
from openwork_core.cli.entry import serve_without_cli_tree

CLIENT_ONLY = (
    "typer",
    "httpx",
    "openwork_core.cli.commands",
    "openwork_core.cli.client",
    "openwork_core.cli.chat",
    "openwork_core.cli.doctor",
)


def test_the_serve_path_imports_no_cli_tree_no_client_command_and_no_httpx() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys\n"
            "from openwork_core.cli import main\n"
            "from openwork_core.cli.entry import serve_without_cli_tree\n"
            "assert serve_without_cli_tree(['serve', '--allow-remote']) is True\n"
            "import openwork_core.cli.server_run, openwork_core.daemon.server\n"
            f"print(json.dumps({{m: m in sys.modules for m in {CLIENT_ONLY!r}}}))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == dict.fromkeys(CLIENT_ONLY, False)


def test_only_a_plain_serve_skips_the_cli_tree() -> None:
    """Help, a wrong option and every other command go through typer (its help and errors)."""
    assert serve_without_cli_tree(["serve"]) is False
    assert serve_without_cli_tree(["serve", "--allow-remote"]) is True
    for args in ([], ["serve", "--help"], ["serve", "--bogus"], ["chat"], ["--version"]):
        assert serve_without_cli_tree(args) is None


def test_each_command_module_registers_exactly_the_commands_mapped_to_it() -> None:
    for module in set(COMMAND_MODULES.values()):
        commands = typer.Typer()
        importlib.import_module(module).register(commands)
        registered = set(typer.main.get_group(commands).commands)
        assert registered == {name for name, m in COMMAND_MODULES.items() if m == module}


def test_help_lists_every_command_in_order() -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    listed = group.list_commands(typer.Context(group))
    assert listed[: len(COMMAND_MODULES)] == list(COMMAND_MODULES)
    assert all(group.get_command(typer.Context(group), name) is not None for name in listed)
