"""The context engine: pure functions that turn the three materialized regions into one
provider-neutral request (context-window.md). World State lives in ``world_state`` and is not
re-exported here."""

from __future__ import annotations

from openwork_core.context.budget import (
    ContextBudgetEstimate,
    estimate_conversation_tokens,
    estimate_system_context_tokens,
    estimate_tool_surface_tokens,
)
from openwork_core.context.builder import (
    AGENT_SYSTEM_KEY,
    ResolvedSystemContext,
    SystemContextBuilder,
    SystemContextPart,
)
from openwork_core.context.engine import (
    ContextEngine,
    PreparedModelCall,
    validate_system_context,
)
from openwork_core.context.errors import (
    AgentMessageTooLarge,
    ContextAssemblyError,
    DataBlockInUserInput,
    SkillTooLarge,
    SystemContextInvalid,
    SystemMessageInConversation,
)
from openwork_core.context.inspection import ContextInspection, build_context_inspection
from openwork_core.context.item_limits import (
    AGENT_MESSAGE_TOKEN_LIMIT,
    SKILL_BODY_TOKEN_LIMIT,
    SYSTEM_CONTEXT_PART_TOKEN_LIMIT,
    check_agent_message,
    check_skill_body,
    check_system_context_part,
    estimate_text_item_tokens,
)
from openwork_core.context.limits import (
    SUMMARY_OUTPUT_TOKEN_CAP,
    ModelContextLimits,
    summary_output_tokens,
)
from openwork_core.context.normalize import INTERRUPTED_RESULT_TEXT, ProjectionSummary
from openwork_core.context.provenance import (
    INTERRUPTED_TOOL_RESULT_REASON,
    Provenance,
    RealProvenance,
    SyntheticProvenance,
)
from openwork_core.context.prune import spill_file_name, spill_path

__all__ = [
    "AGENT_MESSAGE_TOKEN_LIMIT",
    "AGENT_SYSTEM_KEY",
    "INTERRUPTED_RESULT_TEXT",
    "INTERRUPTED_TOOL_RESULT_REASON",
    "SKILL_BODY_TOKEN_LIMIT",
    "SUMMARY_OUTPUT_TOKEN_CAP",
    "SYSTEM_CONTEXT_PART_TOKEN_LIMIT",
    "AgentMessageTooLarge",
    "ContextAssemblyError",
    "ContextBudgetEstimate",
    "ContextEngine",
    "ContextInspection",
    "DataBlockInUserInput",
    "ModelContextLimits",
    "PreparedModelCall",
    "ProjectionSummary",
    "Provenance",
    "RealProvenance",
    "ResolvedSystemContext",
    "SkillTooLarge",
    "SyntheticProvenance",
    "SystemContextBuilder",
    "SystemContextInvalid",
    "SystemContextPart",
    "SystemMessageInConversation",
    "build_context_inspection",
    "check_agent_message",
    "check_skill_body",
    "check_system_context_part",
    "estimate_conversation_tokens",
    "estimate_system_context_tokens",
    "estimate_text_item_tokens",
    "estimate_tool_surface_tokens",
    "spill_file_name",
    "spill_path",
    "summary_output_tokens",
    "validate_system_context",
]
