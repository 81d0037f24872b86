"""Package boundaries and small contracts (tools.md header, §4, §8; DESIGN.md §3, §4)."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import openwork_tools
from openwork_tools.context import (
    HOST_ENV_KEYS,
    MessageProgress,
    StdoutProgress,
    ToolProgress,
    ToolSessionContext,
    default_credential_paths,
    queue_sink,
)

PACKAGE = Path(openwork_tools.__file__).parent


def test_openwork_tools_imports_neither_core_nor_chat_state_internals() -> None:
    """tools.md: `openwork_tools` must not depend on `openwork_core`; chat state: messages and
    the error root only (DESIGN.md §2, docs/architecture.md "Errors")."""
    offenders = []
    for source in PACKAGE.rglob("*.py"):
        tree = ast.parse(source.read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name.startswith("openwork_core") or (
                    name.startswith("openwork_chat_state")
                    and name
                    not in ("openwork_chat_state.messages", "openwork_chat_state.error_root")
                ):
                    offenders.append(f"{source.name}: {name}")
    assert offenders == []


def test_modules_stay_under_the_soft_line_limit() -> None:
    """DESIGN.md §3: soft limit 400 lines per module."""
    long = {
        p.name: n for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 400
    }
    assert long == {}


async def test_queue_sink_drops_when_full_and_never_blocks() -> None:
    """tools.md §8: progress is try-send; dropped when full, result unaffected."""
    queue: asyncio.Queue[ToolProgress] = asyncio.Queue(maxsize=1)
    send = queue_sink(queue)
    send(StdoutProgress("a"))
    send(MessageProgress("dropped"))
    assert queue.qsize() == 1 and queue.get_nowait() == StdoutProgress("a")


def test_session_context_copies_only_six_host_variables_and_defaults_credentials(
    tmp_path: Path, monkeypatch: object
) -> None:
    """tools.md §4: only PATH HOME SHELL LANG LC_ALL TMPDIR from the host process."""
    from openwork_tools.modes import SandboxStatus

    session = ToolSessionContext(
        working_directory=tmp_path,
        sandbox=SandboxStatus(True),
        home=tmp_path,
        environment={"PATH": "/bin", "AWS_SECRET_ACCESS_KEY": "x", "LANG": "C"},
    )
    assert dict(session.environment) == {"PATH": "/bin", "LANG": "C"}
    assert set(HOST_ENV_KEYS) == {"PATH", "HOME", "SHELL", "LANG", "LC_ALL", "TMPDIR"}
    assert session.credential_paths == tuple(
        p.resolve() for p in default_credential_paths(tmp_path)
    )
    assert tmp_path / ".ssh" in session.credential_paths
