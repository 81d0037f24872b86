"""Usage checks and prompt-cache diagnostics of one submission (issue 14 points 5 and 9), pure.

Each submission's request copy gets a ``RequestFingerprint``: the hash of its stable prefix —
provider, model, System Context and Tool Surface, everything a provider's cache keys on before
the Conversation — its byte sizes, and the Conversation messages themselves (references, no copy;
they are immutable). Comparing two fingerprints costs one hash comparison plus an identity-first
walk over the messages: nothing is serialized again (the sizes are the context engine's own
measurements, ``PreparedModelCall.conversation_sizes``).

A cache miss is recorded when the previous call's request was large enough to be cached
(``MIN_CACHEABLE_TOKENS``) and the provider's cached input falls below ``FAR_BELOW`` of it. Its
cause, first match wins: only the Tool Surface changed (an MCP server's tools, reloaded at a turn
boundary: ``tool_surface_changed``); the stable prefix changed; the Conversation diverged at item N so that
less than ``FAR_BELOW`` of it is shared; the provider reports no cached input at all; the calls
were further apart than ``CACHE_LIFETIME_S``; else unexplained.

Silent truncation (Ollama and others cut the prompt to their window without an error): the
provider's reported input below ``TRUNCATION_RATIO`` of our estimate, for an estimate of at
least ``MIN_CACHEABLE_TOKENS``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

import orjson

from openwork_chat_state.messages import Message, ToolDefinition
from openwork_core.context.builder import ResolvedSystemContext
from openwork_core.context.engine import PreparedModelCall
from openwork_core.context.wire import array_size, tokens_for_bytes
from openwork_core.storage.usage_records import CacheMiss, CacheMissCause

MIN_CACHEABLE_TOKENS = 1024
"""OpenAI and Anthropic cache no prefix shorter than this."""

FAR_BELOW = 0.5
CACHE_LIFETIME_S = 300.0
"""Anthropic's ephemeral cache lives 5 minutes; OpenAI's 5-10 minutes of inactivity."""

TRUNCATION_RATIO = 0.5


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestFingerprint:
    provider_id: str
    model: str
    system: ResolvedSystemContext
    tools: tuple[ToolDefinition, ...]
    stable_prefix_hash: str
    stable_prefix_bytes: int
    conversation: tuple[Message, ...]
    conversation_sizes: tuple[int, ...]
    request_bytes: int
    at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedPrefix:
    bytes: int
    changed_item: int | None
    """The first Conversation item of the previous request that this one does not repeat."""
    stable_prefix_changed: bool


def stable_prefix(provider_id: str, prepared: PreparedModelCall) -> tuple[str, int]:
    """Hash and byte size of what precedes the Conversation (O(system + tools), never the
    history)."""
    request = prepared.request
    system = request.messages[: len(request.messages) - len(prepared.conversation)]
    encoded = orjson.dumps([provider_id, request.model, system, request.tools])
    return hashlib.sha256(encoded).hexdigest()[:32], len(encoded)


def fingerprint(
    provider_id: str,
    prepared: PreparedModelCall,
    at: datetime,
    previous: RequestFingerprint | None = None,
) -> RequestFingerprint:
    """``previous`` with the very same System Context and tool objects (the calls of one turn)
    lends its stable-prefix hash: then nothing at all is serialized."""
    request = prepared.request
    if (
        previous is not None
        and previous.system is prepared.system
        and previous.tools is request.tools
        and previous.provider_id == provider_id
        and previous.model == request.model
    ):
        prefix_hash, prefix_bytes = previous.stable_prefix_hash, previous.stable_prefix_bytes
    else:
        prefix_hash, prefix_bytes = stable_prefix(provider_id, prepared)
    sizes = prepared.conversation_sizes
    return RequestFingerprint(
        provider_id=provider_id,
        model=request.model,
        system=prepared.system,
        tools=request.tools,
        stable_prefix_hash=prefix_hash,
        stable_prefix_bytes=prefix_bytes,
        conversation=prepared.conversation,
        conversation_sizes=sizes,
        request_bytes=prefix_bytes + array_size(sum(sizes), len(sizes)),
        at=at,
    )


def shared_prefix(previous: RequestFingerprint, current: RequestFingerprint) -> SharedPrefix:
    """How much of ``current`` repeats ``previous`` from the start."""
    if previous.stable_prefix_hash != current.stable_prefix_hash:
        return SharedPrefix(bytes=0, changed_item=None, stable_prefix_changed=True)
    old, new = previous.conversation, current.conversation
    same = len(old)
    if new[:same] != old:  # one C-level pass, identity first: the append-only common case
        same = 0
        for before, now in zip(old, new, strict=False):
            if before is not now and before != now:
                break
            same += 1
    if same == len(old):  # all of the previous request but its closing bracket
        return SharedPrefix(
            bytes=max(0, previous.request_bytes - 1), changed_item=None, stable_prefix_changed=False
        )
    changed = same
    shared = current.stable_prefix_bytes + sum(current.conversation_sizes[:same]) + same
    return SharedPrefix(bytes=shared, changed_item=changed, stable_prefix_changed=False)


def cache_miss(
    previous: RequestFingerprint,
    current: RequestFingerprint,
    shared: SharedPrefix,
    cached_input_tokens: int | None,
) -> CacheMiss | None:
    """See the module docstring."""
    cacheable = tokens_for_bytes(previous.request_bytes)
    if cacheable < MIN_CACHEABLE_TOKENS:
        return None
    if cached_input_tokens is not None and cached_input_tokens >= FAR_BELOW * cacheable:
        return None
    if shared.stable_prefix_changed:
        if only_tools_changed(previous, current):
            return CacheMiss(cause=CacheMissCause.TOOL_SURFACE_CHANGED)
        return CacheMiss(cause=CacheMissCause.STABLE_PREFIX_CHANGED)
    if shared.changed_item is not None and tokens_for_bytes(shared.bytes) < FAR_BELOW * cacheable:
        return CacheMiss(cause=CacheMissCause.PREFIX_CHANGED, item=shared.changed_item)
    if cached_input_tokens is None:
        return CacheMiss(cause=CacheMissCause.NO_CACHE_REPORTED)
    if idle_seconds(previous, current) > CACHE_LIFETIME_S:
        return CacheMiss(cause=CacheMissCause.IDLE_EXPIRED)
    return CacheMiss(cause=CacheMissCause.UNEXPLAINED)


def only_tools_changed(previous: RequestFingerprint, current: RequestFingerprint) -> bool:
    """The same provider, model and System Context, other tools (compared only on a miss)."""
    return (
        previous.provider_id == current.provider_id
        and previous.model == current.model
        and (previous.system is current.system or previous.system == current.system)
        and previous.tools != current.tools
    )


def idle_seconds(previous: RequestFingerprint, current: RequestFingerprint) -> float:
    return max(0.0, (current.at - previous.at).total_seconds())


def truncation_suspected(estimated_input_tokens: int, reported_input_tokens: int | None) -> bool:
    """The provider saw far fewer tokens than we sent (issue 14 point 1)."""
    return (
        reported_input_tokens is not None
        and estimated_input_tokens >= MIN_CACHEABLE_TOKENS
        and reported_input_tokens < TRUNCATION_RATIO * estimated_input_tokens
    )
