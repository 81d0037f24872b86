"""The context engine: pure functions that turn the three materialized regions into one
provider-neutral request (context-window.md). World State lives in ``world_state`` and is not
re-exported here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openwork_core.lazy_exports import lazy_getattr

if TYPE_CHECKING:
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

_EXPORTS = {
    "AGENT_MESSAGE_TOKEN_LIMIT": "openwork_core.context.item_limits",
    "AGENT_SYSTEM_KEY": "openwork_core.context.builder",
    "AgentMessageTooLarge": "openwork_core.context.errors",
    "ContextAssemblyError": "openwork_core.context.errors",
    "ContextBudgetEstimate": "openwork_core.context.budget",
    "ContextEngine": "openwork_core.context.engine",
    "ContextInspection": "openwork_core.context.inspection",
    "DataBlockInUserInput": "openwork_core.context.errors",
    "INTERRUPTED_RESULT_TEXT": "openwork_core.context.normalize",
    "INTERRUPTED_TOOL_RESULT_REASON": "openwork_core.context.provenance",
    "ModelContextLimits": "openwork_core.context.limits",
    "PreparedModelCall": "openwork_core.context.engine",
    "ProjectionSummary": "openwork_core.context.normalize",
    "Provenance": "openwork_core.context.provenance",
    "RealProvenance": "openwork_core.context.provenance",
    "ResolvedSystemContext": "openwork_core.context.builder",
    "SKILL_BODY_TOKEN_LIMIT": "openwork_core.context.item_limits",
    "SUMMARY_OUTPUT_TOKEN_CAP": "openwork_core.context.limits",
    "SYSTEM_CONTEXT_PART_TOKEN_LIMIT": "openwork_core.context.item_limits",
    "SkillTooLarge": "openwork_core.context.errors",
    "SyntheticProvenance": "openwork_core.context.provenance",
    "SystemContextBuilder": "openwork_core.context.builder",
    "SystemContextInvalid": "openwork_core.context.errors",
    "SystemContextPart": "openwork_core.context.builder",
    "SystemMessageInConversation": "openwork_core.context.errors",
    "build_context_inspection": "openwork_core.context.inspection",
    "check_agent_message": "openwork_core.context.item_limits",
    "check_skill_body": "openwork_core.context.item_limits",
    "check_system_context_part": "openwork_core.context.item_limits",
    "estimate_conversation_tokens": "openwork_core.context.budget",
    "estimate_system_context_tokens": "openwork_core.context.budget",
    "estimate_text_item_tokens": "openwork_core.context.item_limits",
    "estimate_tool_surface_tokens": "openwork_core.context.budget",
    "spill_file_name": "openwork_core.context.prune",
    "spill_path": "openwork_core.context.prune",
    "summary_output_tokens": "openwork_core.context.limits",
    "validate_system_context": "openwork_core.context.engine",
}
"""Each public name's module: nothing is imported until a name is used."""

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

if not TYPE_CHECKING:  # for mypy the names are the imports above: a misspelt one is an error
    __getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
