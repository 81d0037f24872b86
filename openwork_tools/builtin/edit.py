"""``edit``: exact string replacement in a UTF-8 file (tools.md §7 edit)."""

from __future__ import annotations

import asyncio

from pydantic import Field

from openwork_tools.builtin import mutation
from openwork_tools.context import ToolCallContext, ToolSessionContext
from openwork_tools.definition import RiskHint, Tool
from openwork_tools.prepared import PreparedCall
from openwork_tools.results import ToolResult
from openwork_tools.schema import EscalationInput

DESCRIPTION = (
    "Replace an exact string in a UTF-8 text file. oldString must occur exactly once unless "
    "replaceAll is true; an empty oldString creates a new file with newString. The file must "
    "have been read first."
)


class EditInput(EscalationInput):
    file_path: str = Field(min_length=1, description="Absolute, or relative to the workspace.")
    old_string: str = Field(description="Exact text to replace; empty creates a new file.")
    new_string: str = Field(description="Replacement text.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def plan_edit(display: str, before: str | None, tool_input: EditInput) -> tuple[str, int, str]:
    """(new content, occurrences, line range) or ``MutationFailed`` with the model's next step."""
    old, new = tool_input.old_string, tool_input.new_string
    if old == new:
        raise mutation.MutationFailed("oldString and newString are identical; nothing to change.")
    if before is None:
        if old:
            raise mutation.MutationFailed(
                f"File not found: {display}. Use an empty oldString to create it."
            )
        return new, 1, ""
    if not old:
        raise mutation.MutationFailed(
            f"oldString is empty but {display} already exists; give the exact text to replace, "
            "or use write to replace the whole file."
        )
    count = before.count(old)
    if count == 0:
        raise mutation.MutationFailed(
            f"oldString not found in {display}. Read the file again and copy the exact text, "
            "including whitespace and indentation."
        )
    if count > 1 and not tool_input.replace_all:
        raise mutation.MutationFailed(
            f"oldString occurs {count} times in {display}; include more surrounding lines to make "
            "it unique, or set replaceAll to true."
        )
    index = before.index(old)
    after = before.replace(old, new) if tool_input.replace_all else before.replace(old, new, 1)
    first = _line_of(after, index)
    last = _line_of(after, index + len(new) - 1) if new else first
    span = f"{first}" if last <= first else f"{first}-{last}"
    return after, count, span


class EditTool(Tool[EditInput]):
    input_model = EditInput
    escalation = True

    def __init__(self) -> None:
        super().__init__("edit", DESCRIPTION, RiskHint.WORKSPACE_MUTATION)

    def inspect(self, session: ToolSessionContext, tool_input: EditInput) -> PreparedCall:
        return mutation.prepare_mutation(
            session, tool_input.file_path, tool_input.sandbox_permissions, tool_input.justification
        )

    async def execute(
        self, session: ToolSessionContext, call: ToolCallContext, tool_input: EditInput
    ) -> ToolResult:
        size = len(tool_input.new_string.encode())
        if size > mutation.MAX_FILE_BYTES:
            return mutation.failure(
                f"newString is {size} bytes; edit accepts at most 1048576 bytes (1 MiB)."
            )
        checked = await mutation.resolve_target(tool_input.file_path, session, call)
        if isinstance(checked, ToolResult):
            return checked
        async with session.write_locks.for_path(checked.real):
            try:
                current = await asyncio.to_thread(mutation.load_current, checked)
                mutation.check_observed(session, checked, current)
                after, count, span = plan_edit(checked.display, current.text, tool_input)
                change = await mutation.commit(session, call, checked, current, after, "edit")
            except mutation.MutationFailed as failed:
                return mutation.failure(str(failed))
        if isinstance(change, ToolResult):
            return change
        delta = f"(+{change.additions} -{change.deletions})"
        if current.text is None:
            text = f"Created {checked.display} (+{change.additions})"
        elif count > 1:
            text = f"Replaced {count} occurrences in {checked.display} {delta}"
        else:
            text = f"Edited {checked.display}:{span} {delta}"
        return ToolResult.ok(text, (change,))
