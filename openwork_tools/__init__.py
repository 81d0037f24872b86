"""OpenWork tools: contract, registry, built-in tools, path fence, results and the sandbox.

Must not import ``openwork_core``; from ``openwork_chat_state`` only ``messages``.
"""

from __future__ import annotations

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
from openwork_tools.sandbox.danger import detect_danger
from openwork_tools.sandbox.probe import probe_sandbox, run_self_check
from openwork_tools.schema import EscalationInput, ToolInput
from openwork_tools.undo import ChangeDirection, apply_file_changes

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
