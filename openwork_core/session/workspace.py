"""Which directories may be a session's workspace (ownership issue: containment).

The daemon's own directory (``OPENWORK_HOME``: token, provider keys, database, logs, every
session's spill files) is hidden from every tool. A workspace that is ``/``, lies inside that
directory, or contains it would put the daemon within the model's reach, so it is refused with
``invalid_workspace`` — except the user's home directory itself (the spec's home-as-workspace
case, permissions-sandbox.md §1), where the daemon's directory stays hidden by the tools' fence
and bash cannot write the workspace."""

from __future__ import annotations

from pathlib import Path


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def workspace_refusal(
    workspace: Path, daemon_home: Path, user_home: Path | None = None
) -> str | None:
    """The reason ``workspace`` (resolved) cannot be a session's workspace, or ``None``."""
    if workspace == Path(workspace.anchor):
        return "the filesystem root cannot be a workspace"
    if _under(workspace, daemon_home):
        return "a workspace cannot lie inside the OpenWork daemon's own directory"
    home = (user_home or Path.home()).resolve()
    if _under(daemon_home, workspace) and workspace != home:
        return (
            "a workspace cannot contain the OpenWork daemon's own directory "
            f"({daemon_home}); choose a project folder"
        )
    return None
