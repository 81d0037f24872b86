"""Which provider-opaque blocks may go back to a provider (model-providers.md §1), pure.

A ``ProviderOpaqueBlock`` is "only ever sent back to the same driver". Signed thinking (Anthropic)
and encrypted reasoning (OpenAI Responses) are bound to the server and the model that made them,
so the adapter stamps each block it produces with its ``OpaqueScope`` — the endpoint (base URL)
and the requested model — and sends a block back only when driver, endpoint and model all match
the request at hand. A block of another driver, another endpoint (provider switch), another model
(model switch) or without a scope is dropped from the wire request; it stays in the Conversation.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

from openwork_chat_state.messages import ProviderOpaqueBlock


@dataclass(frozen=True, slots=True, kw_only=True)
class OpaqueScope:
    """Where opaque blocks come from and may go back to: one endpoint, one model."""

    endpoint: str
    model: str


def scoped_block(
    driver: str, kind: str, scope: OpaqueScope, data: dict[str, JsonValue]
) -> ProviderOpaqueBlock:
    """A block of ``driver`` carrying ``data`` and the scope it may go back to."""
    payload: dict[str, JsonValue] = {"endpoint": scope.endpoint, "model": scope.model, **data}
    return ProviderOpaqueBlock(driver=driver, kind=kind, payload=payload)


def replayable(
    block: ProviderOpaqueBlock, driver: str, scope: OpaqueScope | None
) -> dict[str, JsonValue] | None:
    """The block's payload when it may go back under ``scope``; ``None`` drops it."""
    payload = block.payload
    if scope is None or block.driver != driver or not isinstance(payload, dict):
        return None
    if payload.get("endpoint") != scope.endpoint or payload.get("model") != scope.model:
        return None
    return payload
