"""``write``: create or overwrite a whole UTF-8 file (tools.md §7 write)."""

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
    "Write the full content of a UTF-8 text file (at most 1 MiB), creating it and its parent "
    "directories when missing. An existing file must have been read first."
)


class WriteInput(EscalationInput):
    path: str = Field(min_length=1, description="Absolute, or relative to the workspace root.")
    content: str = Field(description="The complete new content of the file.")


def summary(display: str, created: bool, additions: int, deletions: int) -> str:
    if created:
        return f"Created {display} (+{additions})"
    return f"Overwrote {display} (+{additions} -{deletions})"


class WriteTool(Tool[WriteInput]):
    input_model = WriteInput
    escalation = True

    def __init__(self) -> None:
        super().__init__("write", DESCRIPTION, RiskHint.WORKSPACE_MUTATION)

    def inspect(self, session: ToolSessionContext, tool_input: WriteInput) -> PreparedCall:
        return mutation.prepare_mutation(
            session, tool_input.path, tool_input.sandbox_permissions, tool_input.justification
        )

    async def execute(
        self, session: ToolSessionContext, call: ToolCallContext, tool_input: WriteInput
    ) -> ToolResult:
        size = len(tool_input.content.encode())
        if size > mutation.MAX_FILE_BYTES:
            return mutation.failure(
                f"content is {size} bytes; write accepts at most 1048576 bytes (1 MiB)."
            )
        checked = await mutation.resolve_target(tool_input.path, session, call)
        if isinstance(checked, ToolResult):
            return checked
        async with session.write_locks.for_path(checked.real):
            try:
                current = await asyncio.to_thread(mutation.load_current, checked)
                mutation.check_observed(session, checked, current)
                if current.text == tool_input.content:
                    return ToolResult.ok(f"{checked.display} unchanged: the content is identical")
                change = await mutation.commit(
                    session, call, checked, current, tool_input.content, "write"
                )
            except mutation.MutationFailed as failed:
                return mutation.failure(str(failed))
        if isinstance(change, ToolResult):
            return change
        text = summary(checked.display, current.text is None, change.additions, change.deletions)
        return ToolResult.ok(text, (change,))
