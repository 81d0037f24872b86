"""Tool results, their model-visible block, and the ``file_change`` artifact (tools.md §8)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar, Literal, TypeAlias, assert_never

from pydantic import ConfigDict, JsonValue
from pydantic.alias_generators import to_camel

from openwork_chat_state.messages import (
    JsonObject,
    TextBlock,
    ToolOutputBlock,
    ToolResultBlock,
    ToolResultState,
)

_CAMEL_CASE = ConfigDict(alias_generator=to_camel, populate_by_name=True)
"""A ``file_change`` artifact is camelCase wherever it is written (``to_json``; tools.md §8): its
schema says so in every document that includes it."""

RESULT_TEXT_LIMIT = 32_000
"""Every result through ``FinalizedToolset`` is at most this many UTF-8 bytes, footer included."""
FOOTER_RESERVE = 512


class ToolStatus(enum.StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    DENIED = "denied"
    CANCELLED = "cancelled"
    OUTCOME_UNKNOWN = "outcome_unknown"


class ToolErrorCode(enum.StrEnum):
    TOOL_NOT_FOUND = "tool_not_found"
    INVALID_ARGUMENTS = "invalid_arguments"
    PERMISSION_DENIED = "permission_denied"
    CANCELLED = "cancelled"
    TIMEOUT = "timeout"
    EXECUTION_FAILED = "execution_failed"
    OUTCOME_UNKNOWN = "outcome_unknown"
    SANDBOX_UNAVAILABLE = "sandbox_unavailable"


@dataclass(frozen=True, slots=True)
class ToolError:
    code: ToolErrorCode
    message: str
    retryable: bool = False


@dataclass(frozen=True, slots=True)
class DiffHunk:
    """One unified-diff hunk with 3 lines of context; ``lines`` keep their ' '/'+'/'-' prefix."""

    __pydantic_config__: ClassVar[ConfigDict] = _CAMEL_CASE
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: tuple[str, ...]

    @classmethod
    def from_json(cls, data: JsonObject) -> DiffHunk:
        lines = data["lines"]
        assert isinstance(lines, list)
        return cls(
            old_start=_int(data["oldStart"]),
            old_lines=_int(data["oldLines"]),
            new_start=_int(data["newStart"]),
            new_lines=_int(data["newLines"]),
            lines=tuple(str(line) for line in lines),
        )

    def to_json(self) -> JsonObject:
        return {
            "oldStart": self.old_start,
            "oldLines": self.old_lines,
            "newStart": self.new_start,
            "newLines": self.new_lines,
            "lines": list(self.lines),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    """The UI-only record of one write/edit that changed content (tools.md §8)."""

    __pydantic_config__: ClassVar[ConfigDict] = _CAMEL_CASE
    type: Literal["file_change"] = "file_change"
    change_id: str
    path: str
    kind: Literal["created", "modified"]
    additions: int
    deletions: int
    hunks: tuple[DiffHunk, ...]
    before_hash: str | None
    after_hash: str
    before_content: str | None
    after_content: str
    undone: bool = False

    def to_json(self) -> JsonObject:
        return {
            "type": self.type,
            "changeId": self.change_id,
            "path": self.path,
            "kind": self.kind,
            "additions": self.additions,
            "deletions": self.deletions,
            "hunks": [h.to_json() for h in self.hunks],
            "beforeHash": self.before_hash,
            "afterHash": self.after_hash,
            "beforeContent": self.before_content,
            "afterContent": self.after_content,
            "undone": self.undone,
        }

    @classmethod
    def from_json(cls, data: JsonObject) -> FileChange:
        """Rebuild a stored artifact (diffs survive reload, tools.md §10)."""
        kind: Literal["created", "modified"]
        if data["kind"] == "created":
            kind = "created"
        elif data["kind"] == "modified":
            kind = "modified"
        else:
            raise ValueError(f"not a file_change kind: {data['kind']!r}")
        if data.get("type", "file_change") != "file_change":
            raise ValueError(f"not a file_change artifact: {data.get('type')!r}")
        hunks = data["hunks"]
        assert isinstance(hunks, list)
        return cls(
            change_id=str(data["changeId"]),
            path=str(data["path"]),
            kind=kind,
            additions=_int(data["additions"]),
            deletions=_int(data["deletions"]),
            hunks=tuple(DiffHunk.from_json(h) for h in hunks if isinstance(h, dict)),
            before_hash=_opt_str(data["beforeHash"]),
            after_hash=str(data["afterHash"]),
            before_content=_opt_str(data["beforeContent"]),
            after_content=str(data["afterContent"]),
            undone=bool(data.get("undone", False)),
        )


def _int(value: JsonValue) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected an integer, got {value!r}")
    return value


def _opt_str(value: JsonValue) -> str | None:
    return None if value is None else str(value)


Artifact: TypeAlias = FileChange


_STATE: dict[ToolStatus, ToolResultState] = {
    ToolStatus.SUCCEEDED: ToolResultState.SUCCESS,
    ToolStatus.FAILED: ToolResultState.ERROR,
    ToolStatus.OUTCOME_UNKNOWN: ToolResultState.ERROR,
    ToolStatus.DENIED: ToolResultState.DENIED,
    ToolStatus.CANCELLED: ToolResultState.INTERRUPTED,
}


def result_state(status: ToolStatus) -> ToolResultState:
    match status:
        case (
            ToolStatus.SUCCEEDED
            | ToolStatus.FAILED
            | ToolStatus.OUTCOME_UNKNOWN
            | ToolStatus.DENIED
            | ToolStatus.CANCELLED
        ):
            return _STATE[status]
        case _:
            assert_never(status)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """One final result per call. Only ``content`` reaches the model; artifacts stay beside it.
    Built-in tools return text; an MCP tool's images are data blocks after its text."""

    status: ToolStatus
    content: tuple[ToolOutputBlock, ...]
    artifacts: tuple[Artifact, ...] = ()
    error: ToolError | None = None
    sandbox_denied: bool = False

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    def to_block(self, call_id: str, name: str) -> ToolResultBlock:
        return ToolResultBlock(
            id=call_id, name=name, output=self.content, state=result_state(self.status)
        )

    def with_text(self, text: str) -> ToolResult:
        """The same result with new text (its data blocks kept after it); a failed result's
        message follows its text."""
        error = self.error
        if error is not None:
            error = ToolError(error.code, text, error.retryable)
        data = tuple(b for b in self.content if not isinstance(b, TextBlock))
        return ToolResult(
            status=self.status,
            content=(TextBlock(text=text), *data),
            artifacts=self.artifacts,
            error=error,
            sandbox_denied=self.sandbox_denied,
        )

    @classmethod
    def ok(
        cls, text: str, artifacts: tuple[Artifact, ...] = (), *, sandbox_denied: bool = False
    ) -> ToolResult:
        return cls(
            status=ToolStatus.SUCCEEDED,
            content=(TextBlock(text=text),),
            artifacts=artifacts,
            sandbox_denied=sandbox_denied,
        )

    @classmethod
    def fail(
        cls,
        code: ToolErrorCode,
        message: str,
        *,
        status: ToolStatus = ToolStatus.FAILED,
        retryable: bool = False,
        sandbox_denied: bool = False,
    ) -> ToolResult:
        """A failed result: its text equals the error message (tools.md §8)."""
        return cls(
            status=status,
            content=(TextBlock(text=message),),
            error=ToolError(code, message, retryable),
            sandbox_denied=sandbox_denied,
        )

    @classmethod
    def denied(cls, message: str, *, sandbox_denied: bool) -> ToolResult:
        return cls.fail(
            ToolErrorCode.PERMISSION_DENIED,
            message,
            status=ToolStatus.DENIED,
            sandbox_denied=sandbox_denied,
        )
