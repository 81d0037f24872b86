"""``runtime/sandbox-policy``: the ``<sandbox_policy>`` section (permissions-sandbox.md §3).

The section is always present. The unavailable line names "the bubblewrap sandbox" where the
original names "the macOS sandbox": our backend is Linux bubblewrap (DESIGN.md §2). When bash is
available a fifth line says whether it has the network and how to ask for it (issue 22; the
decision is in docs/world-state.md): the spec's four lines are unchanged.
"""

from __future__ import annotations

import os

from openwork_core.context.world_state._display import display_name
from openwork_tools.modes import SandboxMode, SandboxStatus
from openwork_tools.policy import NETWORK_GRANT_LINE, NETWORK_ON_LINE

SANDBOX_POLICY_TAG = "<sandbox_policy>"
SANDBOX_POLICY_CLOSE_TAG = "</sandbox_policy>"
SANDBOX_POLICY_REPLACEMENT_NOTICE = "The sandbox policy below replaces the previous one."
SANDBOX_POLICY_INVALIDATION_NOTICE = "The previous sandbox policy no longer applies."
WRITE_EDIT_LINE = "write / edit: can change files in the workspace."
BASH_WRITES_WORKSPACE_LINE = (
    "bash: runs in the sandbox and can write the workspace and temporary directories."
)
BASH_READ_ONLY_WORKSPACE_LINE = (
    "bash: runs in the sandbox and can write temporary directories; "
    "writes to the workspace need sandboxPermissions."
)
BASH_UNAVAILABLE_LINE = (
    "bash: unavailable, because the bubblewrap sandbox failed its self-check. "
    "Use read / grep / glob / edit for file work, "
    "and tell the user which command you need them to run."
)


def workspace_contains_home(workspace: str, home: str | None) -> bool:
    """True when the workspace is ``$HOME`` or one of its ancestors (both canonical paths)."""
    if not home:
        return False
    return home == workspace or os.path.commonpath([home, workspace]) == workspace


def bash_may_write_workspace(
    mode: SandboxMode, sandbox: SandboxStatus, workspace: str, home: str | None
) -> bool:
    """permissions-sandbox.md §1: only in ``auto``, with the sandbox available, and never when the
    workspace is ``$HOME`` or an ancestor of it."""
    return (
        sandbox.available
        and mode is SandboxMode.AUTO
        and not workspace_contains_home(workspace, home)
    )


def render_sandbox_policy(
    mode: SandboxMode,
    sandbox: SandboxStatus,
    workspace: str,
    bash_can_write_workspace: bool,
    *,
    network_on: bool = False,
) -> str:
    """The section body: the spec's four lines, then the network line when bash is available.
    Pure."""
    if not sandbox.available:
        bash_line = BASH_UNAVAILABLE_LINE
    elif bash_can_write_workspace:
        bash_line = BASH_WRITES_WORKSPACE_LINE
    else:
        bash_line = BASH_READ_ONLY_WORKSPACE_LINE
    network = (
        [] if not sandbox.available else [NETWORK_ON_LINE if network_on else NETWORK_GRANT_LINE]
    )
    return "\n".join(
        [
            SANDBOX_POLICY_TAG,
            f"mode: {mode.display}",
            f"workspace: {display_name(workspace)}",
            WRITE_EDIT_LINE,
            bash_line,
            *network,
            SANDBOX_POLICY_CLOSE_TAG,
        ]
    )
