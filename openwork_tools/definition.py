"""The tool contract (tools.md §2)."""

from __future__ import annotations

import enum
import functools
from abc import ABC, abstractmethod
from typing import Generic, Protocol, TypeVar

from openwork_chat_state.messages import ToolDefinition
from openwork_tools.context import ToolCallContext, ToolSessionContext
from openwork_tools.prepared import PreparedCall
from openwork_tools.results import ToolErrorCode, ToolResult
from openwork_tools.schema import ToolInput, input_schema, parse_input


@functools.cache
def _definition(
    tool_id: str, description: str, input_model: type[ToolInput], escalation: bool
) -> ToolDefinition:
    schema = input_schema(input_model, escalation=escalation)
    return ToolDefinition(name=tool_id, description=description, parameters=schema)


class RiskHint(enum.StrEnum):
    """Informational only: Core does not decide permissions from it."""

    READ_ONLY = "read_only"
    WORKSPACE_MUTATION = "workspace_mutation"
    PROCESS_EXECUTION = "process_execution"


InputT = TypeVar("InputT", bound=ToolInput)


class AnyTool(Protocol):
    """The type-erased view the registry keeps of a ``Tool[InputT]``."""

    @property
    def tool_id(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def risk(self) -> RiskHint: ...
    def definition(self, *, sandbox_available: bool) -> ToolDefinition: ...
    def prepare(self, session: ToolSessionContext, input_json: str) -> PreparedCall | None: ...
    async def dispatch(
        self, session: ToolSessionContext, call: ToolCallContext, input_json: str
    ) -> ToolResult: ...


class Tool(ABC, Generic[InputT]):
    """An explicit id, a description, one input model (schema + parser), inspect and execute."""

    input_model: type[InputT]
    escalation: bool = False
    """Whether the input carries ``sandboxPermissions``/``justification``."""

    def __init__(self, tool_id: str, description: str, risk: RiskHint) -> None:
        self._id = tool_id
        self._description = description
        self._risk = risk

    @property
    def tool_id(self) -> str:
        return self._id

    @property
    def description(self) -> str:
        return self._description

    @property
    def risk(self) -> RiskHint:
        return self._risk

    def definition(self, *, sandbox_available: bool) -> ToolDefinition:
        """Built once per process for each (id, description, input model, escalation): the
        pydantic schema generation is not repeated on every session load."""
        escalation = self.escalation and sandbox_available
        return _definition(self._id, self._description, self.input_model, escalation)

    def inspect(self, session: ToolSessionContext, tool_input: InputT) -> PreparedCall | None:
        """Pre-execution facts; read-only tools report nothing."""
        return None

    @abstractmethod
    async def execute(
        self, session: ToolSessionContext, call: ToolCallContext, tool_input: InputT
    ) -> ToolResult: ...

    def prepare(self, session: ToolSessionContext, input_json: str) -> PreparedCall | None:
        parsed = parse_input(self.input_model, input_json)
        return None if isinstance(parsed, str) else self.inspect(session, parsed)

    async def dispatch(
        self, session: ToolSessionContext, call: ToolCallContext, input_json: str
    ) -> ToolResult:
        parsed = parse_input(self.input_model, input_json)
        if isinstance(parsed, str):
            return ToolResult.fail(ToolErrorCode.INVALID_ARGUMENTS, parsed)
        return await self.execute(session, call, parsed)
