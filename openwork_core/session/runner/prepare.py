"""What a turn starts from and the one prepare of each of its model calls (context-window.md §2, §8): System Context, the Chat State
view and the Tool Surface through ``ContextEngine.prepare``. The runner calls it before every
submission; the actor's context inspection calls the same function, so what the inspection shows
is what the next request carries."""

from __future__ import annotations

from openwork_core.context.builder import ResolvedSystemContext, SystemContextBuilder
from openwork_core.context.engine import PreparedModelCall
from openwork_core.session.runner.context import ResolvedModel, SessionServices, TurnSpec
from openwork_core.session.runner.guards import in_chat_state
from openwork_core.session.storage import OutgoingMessage, TurnOpening


def system_context(services: SessionServices, *, with_tools: bool = True) -> ResolvedSystemContext:
    """The agent prompt plus, for a turn, the Tool Surface's prompt rules; manual compaction and
    rewind use the agent prompt alone."""
    if not with_tools:
        return SystemContextBuilder().build(services.agent.system_prompt)
    return SystemContextBuilder().build(
        services.agent.system_prompt, services.toolset.system_prompt()
    )


async def prepare_call(
    services: SessionServices, model: ResolvedModel, system: ResolvedSystemContext
) -> PreparedModelCall:
    """Raises ``ContextAssemblyError`` when the Conversation cannot become a legal request and
    ``TurnFailure`` (chat_state_error) when Chat State refuses the read."""
    view = await in_chat_state(services.chat.context_view())
    return services.engine.prepare(
        model=model.model.name,
        capabilities=model.capabilities,
        system=system,
        view=view,
        tools=services.toolset.definitions,
        spill_dir=None if services.spill_dir is None else str(services.spill_dir),
    )


def turn_opening(
    spec: TurnSpec, app_version: str
) -> tuple[TurnOpening, tuple[OutgoingMessage, ...]]:
    """The turn row and its input messages (fresh ids), committed together before the turn is
    accepted (ownership issue: acknowledged = durable)."""
    rows = spec.input.messages
    opening = TurnOpening(
        turn_id=spec.turn_id,
        client_request_id=spec.client_request_id,
        provider_id=spec.model.provider.id,
        model_name=spec.model.model.name,
        app_version=app_version,
    )
    return opening, rows
