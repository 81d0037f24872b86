"""OpenWork tools: contract, registry, built-in tools, path fence, results and the sandbox.

Must not import ``openwork_core``; from ``openwork_chat_state`` only ``messages``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openwork_tools.builtin.registry import (
        BUILTIN_TOOL_IDS,
        EXPLORER_TOOL_IDS,
        builtin_registry,
    )
    from openwork_tools.context import (
        CREDENTIAL_PATHS,
        HOST_ENV_KEYS,
        FileObservations,
        MessageProgress,
        ProgressSink,
        StderrProgress,
        StdoutProgress,
        ToolCallContext,
        ToolProgress,
        ToolSessionContext,
        WriteLocks,
        default_credential_paths,
        queue_sink,
    )
    from openwork_tools.definition import AnyTool, RiskHint, Tool
    from openwork_tools.errors import (
        BlankToolDescription,
        BlankToolId,
        ChangeConflict,
        ChangeDenied,
        ChangeStateMismatch,
        DuplicateToolRegistration,
        DuplicateToolSelection,
        FileChangeError,
        RollbackFailed,
        ToolsError,
        UnknownToolSelection,
    )
    from openwork_tools.modes import SandboxMode, SandboxStatus
    from openwork_tools.paths import CheckedPath, PathIntent, resolve_path
    from openwork_tools.policy import Access, Actor, GrantScope, PathGrant, SandboxPolicy
    from openwork_tools.prepared import DangerMatch, Escalation, PreparedCall
    from openwork_tools.registry import (
        FinalizedToolset,
        ToolRegistry,
        ToolsetConfig,
        tool_not_found_text,
    )
    from openwork_tools.results import (
        RESULT_TEXT_LIMIT,
        Artifact,
        DiffHunk,
        FileChange,
        ToolError,
        ToolErrorCode,
        ToolResult,
        ToolStatus,
    )
    from openwork_tools.sandbox import detect_danger, probe_sandbox, run_self_check
    from openwork_tools.schema import EscalationInput, ToolInput
    from openwork_tools.undo import ChangeDirection, apply_file_changes

_EXPORTS = {
    "Access": "openwork_tools.policy",
    "Actor": "openwork_tools.policy",
    "AnyTool": "openwork_tools.definition",
    "Artifact": "openwork_tools.results",
    "BUILTIN_TOOL_IDS": "openwork_tools.builtin.registry",
    "BlankToolDescription": "openwork_tools.errors",
    "BlankToolId": "openwork_tools.errors",
    "CREDENTIAL_PATHS": "openwork_tools.context",
    "ChangeConflict": "openwork_tools.errors",
    "ChangeDenied": "openwork_tools.errors",
    "ChangeDirection": "openwork_tools.undo",
    "ChangeStateMismatch": "openwork_tools.errors",
    "CheckedPath": "openwork_tools.paths",
    "DangerMatch": "openwork_tools.prepared",
    "DiffHunk": "openwork_tools.results",
    "DuplicateToolRegistration": "openwork_tools.errors",
    "DuplicateToolSelection": "openwork_tools.errors",
    "EXPLORER_TOOL_IDS": "openwork_tools.builtin.registry",
    "Escalation": "openwork_tools.prepared",
    "EscalationInput": "openwork_tools.schema",
    "FileChange": "openwork_tools.results",
    "FileChangeError": "openwork_tools.errors",
    "FileObservations": "openwork_tools.context",
    "FinalizedToolset": "openwork_tools.registry",
    "GrantScope": "openwork_tools.policy",
    "HOST_ENV_KEYS": "openwork_tools.context",
    "MessageProgress": "openwork_tools.context",
    "PathGrant": "openwork_tools.policy",
    "PathIntent": "openwork_tools.paths",
    "PreparedCall": "openwork_tools.prepared",
    "ProgressSink": "openwork_tools.context",
    "RESULT_TEXT_LIMIT": "openwork_tools.results",
    "RiskHint": "openwork_tools.definition",
    "RollbackFailed": "openwork_tools.errors",
    "SandboxMode": "openwork_tools.modes",
    "SandboxPolicy": "openwork_tools.policy",
    "SandboxStatus": "openwork_tools.modes",
    "StderrProgress": "openwork_tools.context",
    "StdoutProgress": "openwork_tools.context",
    "Tool": "openwork_tools.definition",
    "ToolCallContext": "openwork_tools.context",
    "ToolError": "openwork_tools.results",
    "ToolErrorCode": "openwork_tools.results",
    "ToolInput": "openwork_tools.schema",
    "ToolProgress": "openwork_tools.context",
    "ToolRegistry": "openwork_tools.registry",
    "ToolResult": "openwork_tools.results",
    "ToolSessionContext": "openwork_tools.context",
    "ToolStatus": "openwork_tools.results",
    "ToolsError": "openwork_tools.errors",
    "ToolsetConfig": "openwork_tools.registry",
    "UnknownToolSelection": "openwork_tools.errors",
    "WriteLocks": "openwork_tools.context",
    "apply_file_changes": "openwork_tools.undo",
    "builtin_registry": "openwork_tools.builtin.registry",
    "default_credential_paths": "openwork_tools.context",
    "detect_danger": "openwork_tools.sandbox",
    "probe_sandbox": "openwork_tools.sandbox",
    "queue_sink": "openwork_tools.context",
    "resolve_path": "openwork_tools.paths",
    "run_self_check": "openwork_tools.sandbox",
    "tool_not_found_text": "openwork_tools.registry",
}
"""Each public name's module: nothing is imported until a name is used."""

__all__ = [
    "BUILTIN_TOOL_IDS",
    "CREDENTIAL_PATHS",
    "EXPLORER_TOOL_IDS",
    "HOST_ENV_KEYS",
    "RESULT_TEXT_LIMIT",
    "Access",
    "Actor",
    "AnyTool",
    "Artifact",
    "BlankToolDescription",
    "BlankToolId",
    "ChangeConflict",
    "ChangeDenied",
    "ChangeDirection",
    "ChangeStateMismatch",
    "CheckedPath",
    "DangerMatch",
    "DiffHunk",
    "DuplicateToolRegistration",
    "DuplicateToolSelection",
    "Escalation",
    "EscalationInput",
    "FileChange",
    "FileChangeError",
    "FileObservations",
    "FinalizedToolset",
    "GrantScope",
    "MessageProgress",
    "PathGrant",
    "PathIntent",
    "PreparedCall",
    "ProgressSink",
    "RiskHint",
    "RollbackFailed",
    "SandboxMode",
    "SandboxPolicy",
    "SandboxStatus",
    "StderrProgress",
    "StdoutProgress",
    "Tool",
    "ToolCallContext",
    "ToolError",
    "ToolErrorCode",
    "ToolInput",
    "ToolProgress",
    "ToolRegistry",
    "ToolResult",
    "ToolSessionContext",
    "ToolStatus",
    "ToolsError",
    "ToolsetConfig",
    "UnknownToolSelection",
    "WriteLocks",
    "apply_file_changes",
    "builtin_registry",
    "default_credential_paths",
    "detect_danger",
    "probe_sandbox",
    "queue_sink",
    "resolve_path",
    "run_self_check",
    "tool_not_found_text",
]

if not TYPE_CHECKING:  # for mypy the names are the imports above: a misspelt one is an error

    def __getattr__(name: str) -> object:
        """A public name, imported from its module on first use (PEP 562) and kept."""
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
