"""Helpers and fixtures shared by the tools tests (tests/unit/tools, tests/integration/tools): a
real workspace, a fake home with a credential dir, the sandbox verdicts and a call context."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from openwork_tools.builtin.registry import BUILTIN_TOOL_IDS, builtin_registry
from openwork_tools.context import ToolCallContext, ToolSessionContext
from openwork_tools.modes import SandboxMode, SandboxStatus
from openwork_tools.policy import SandboxPolicy
from openwork_tools.registry import FinalizedToolset, ToolsetConfig
from tests.support.visible import visible_dir

AVAILABLE = SandboxStatus(available=True)
UNAVAILABLE = SandboxStatus(available=False, reason="bwrap is not installed")


def call_ctx(
    call_id: str = "call_1", mode: SandboxMode = SandboxMode.AUTO, **kwargs: object
) -> ToolCallContext:
    return ToolCallContext(call_id=call_id, policy=SandboxPolicy(mode), **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """Outside ``/tmp``: bash masks the host's ``/tmp`` (issue 22), and these tests' homes,
    workspaces and outside directories must be where bash sees them, as a user's are."""
    with visible_dir() as path:
        yield path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("SECRET KEY\n")
    (home / ".openwork").mkdir()
    return home


@pytest.fixture
def workspace(home: Path) -> Path:
    ws = home / "project"
    ws.mkdir()
    return ws


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside the workspace and outside every temp dir of the session."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "victim.txt").write_text("untouched\n")
    return out


SessionFactory = Callable[..., ToolSessionContext]


@pytest.fixture
def make_session(home: Path, workspace: Path, tmp_path: Path) -> SessionFactory:
    def make(sandbox: SandboxStatus = AVAILABLE, **kwargs: object) -> ToolSessionContext:
        params: dict[str, object] = {
            "working_directory": workspace,
            "sandbox": sandbox,
            "spill_dir": home / ".openwork" / "spill" / "s1",
            "home": home,
            "protected_roots": (home / ".openwork",),
            "temp_dirs": (tmp_path / "tmp",),
            "environment": {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"},
        }
        (tmp_path / "tmp").mkdir(exist_ok=True)
        params.update(kwargs)
        return ToolSessionContext(**params)  # type: ignore[arg-type]

    return make


@pytest.fixture
def session(make_session: SessionFactory) -> ToolSessionContext:
    return make_session()


@pytest.fixture
def toolset(session: ToolSessionContext) -> FinalizedToolset:
    return builtin_registry().finalize(ToolsetConfig(BUILTIN_TOOL_IDS), session)
