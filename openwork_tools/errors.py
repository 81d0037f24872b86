"""Errors of the tools package, each with a stable code (DESIGN.md §4.5).

Tool *failures* are results the model sees (``ToolResult``), not exceptions; these exceptions are
raised only for programming and configuration faults such as an invalid toolset selection.
"""

from __future__ import annotations

from typing import ClassVar

from openwork_chat_state.error_root import OpenWorkError


class ToolsError(OpenWorkError):
    """Base error of ``openwork_tools``."""

    code: ClassVar[str] = "tools_error"


class BlankToolId(ToolsError):
    """A tool registered with an empty or whitespace-only id (tools.md §3)."""

    code = "blank_tool_id"


class BlankToolDescription(ToolsError):
    """A tool registered with an empty or whitespace-only description (tools.md §3)."""

    code = "blank_tool_description"


class DuplicateToolRegistration(ToolsError):
    """Two tools registered under the same id (tools.md §3)."""

    code = "duplicate_tool_registration"


class DuplicateToolSelection(ToolsError):
    """A ``ToolsetConfig`` names the same tool twice (tools.md §3)."""

    code = "duplicate_tool_selection"


class UnknownToolSelection(ToolsError):
    """A ``ToolsetConfig`` names a tool that is not registered (tools.md §3)."""

    code = "unknown_tool_selection"


class FileChangeError(ToolsError):
    """Undo/reapply of ``file_change`` artifacts failed (tools.md §8); nothing was left half-done
    unless the subclass is ``RollbackFailed``."""

    code = "file_change_error"
    http_status = 409


class ChangeStateMismatch(FileChangeError):
    """Undo of a change already undone, or reapply of a change that is not undone."""

    code = "change_state_mismatch"


class ChangeConflict(FileChangeError):
    """The file's current hash is not the one the change expects; nothing was overwritten."""

    code = "change_conflict"


class ChangeDenied(FileChangeError):
    """The path fence refused the target (hard-protected, or not writable in the mode)."""

    code = "change_denied"


class RollbackFailed(FileChangeError):
    """A partial failure could not be rolled back; files may be in a mixed state."""

    code = "rollback_failed"
