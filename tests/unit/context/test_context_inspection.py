"""The context-window inspection (context-window.md §8, daemon-api.md §3, §11 item 18)."""

from __future__ import annotations

import math

import orjson
from ctx_support import CAPS, History, image, prepare

from openwork_chat_state.item import MessageKind, SyntheticReason
from openwork_core.context.inspection import build_context_inspection
from openwork_core.context.limits import ModelContextLimits


def _metric(value: object) -> int:
    return math.ceil(len(orjson.dumps(value)) / 4)


def _history() -> History:
    h = History()
    h.synthetic(SyntheticReason.COMPACTION_SUMMARY, "summary of earlier work")
    h.user("<sandbox_policy>…</sandbox_policy>", MessageKind.WORLD_STATE)
    h.user("continue — ünïcode")
    h.assistant("", ("a", "read"), ("b", "read"))
    h.result("a", "r" * 12_000, image())
    return h


def test_the_inspection_has_exactly_the_daemon_api_shape() -> None:
    """daemon-api.md §3: the keys, the provenance forms, limits and percentage; plus ``usage``
    (issue 14 point 5, docs/daemon-additions.md), null without recorded calls."""
    prepared = prepare(_history().view(watermark=5))
    limits = ModelContextLimits.from_capabilities(CAPS)
    document = orjson.loads(build_context_inspection(prepared, limits).to_json())
    assert list(document) == [
        "system",
        "conversation",
        "provenance",
        "tools",
        "budget",
        "limits",
        "auto_compact_percent",
        "projection",
        "usage",
        "mcp",
    ]
    assert document["usage"] is None
    assert document["mcp"] is None  # no MCP server: issue 27
    assert document["system"] == [
        {"key": "core/agent-system", "content": "You are a careful coding agent."}
    ]
    assert document["provenance"] == [
        {"synthetic": "compaction_summary"},
        {"message_id": "m1", "sequence": 1, "kind": "world_state"},
        {"message_id": "m2", "sequence": 2, "kind": "normal"},
        {"message_id": "m3", "sequence": 3, "kind": "normal"},
        {"message_id": "m4", "sequence": 4, "kind": "normal"},
        {"synthetic": "interrupted_tool_result"},
    ]
    assert list(document["budget"]) == [
        "system_context_tokens",
        "conversation_tokens",
        "tool_surface_tokens",
        "estimated_input_tokens",
        "reserved_output_tokens",
    ]
    assert document["limits"] == {
        "context_window": 200_000,
        "effective_input_tokens": 168_000,
        "auto_compact_token_limit": 142_800,
    }
    assert document["projection"] == {
        "pruned": 1,
        "truncated": 0,
        "synthesized_results": 1,
        "dropped_results": 0,
        "dropped_data_blocks": 0,
    }
    used = document["budget"]["estimated_input_tokens"] + 32_000
    assert document["auto_compact_percent"] == 100 * used / 142_800


def test_each_region_token_figure_equals_the_metric_of_its_json_array() -> None:
    """daemon-api.md §3: ceil(len(compact UTF-8 JSON of the array) / 4) per region."""
    prepared = prepare(_history().view(watermark=5))
    inspection = build_context_inspection(prepared, ModelContextLimits.from_capabilities(CAPS))
    document = orjson.loads(inspection.to_json())
    budget = document["budget"]
    assert budget["system_context_tokens"] == _metric(document["system"])
    assert budget["conversation_tokens"] == _metric(document["conversation"])
    assert budget["tool_surface_tokens"] == _metric(document["tools"])
    assert budget["estimated_input_tokens"] == sum(
        budget[k] for k in ("system_context_tokens", "conversation_tokens", "tool_surface_tokens")
    )


def test_the_conversation_view_is_the_one_actually_submitted() -> None:
    """§8, §11 item 18 (gap closed for the engine): the inspection's conversation and tools are
    byte-for-byte the request's messages after System and its tools."""
    prepared = prepare(_history().view(watermark=5))
    document = orjson.loads(
        build_context_inspection(prepared, ModelContextLimits.from_capabilities(CAPS)).to_json()
    )
    request = orjson.loads(orjson.dumps(prepared.request))
    assert document["conversation"] == request["messages"][1:]
    assert document["tools"] == request["tools"]
    assert [m["content"][0]["text"] for m in request["messages"][:1]] == [
        part["content"] for part in document["system"]
    ]


def test_a_replay_shows_its_original_message_id_and_sequence() -> None:
    """DESIGN.md §2 (replay provenance), compaction.md §5."""
    from openwork_chat_state.item import ConversationItem, SyntheticOrigin
    from openwork_chat_state.messages import user_text
    from openwork_chat_state.view import ConversationContextView

    replay = ConversationItem(
        message=user_text("the request"),
        origin=SyntheticOrigin(
            compaction_id="c",
            reason=SyntheticReason.LAST_USER_REQUEST_REPLAY,
            source_message_id="m7",
            source_sequence=7,
        ),
    )
    prepared = prepare(ConversationContextView((replay,), None))
    document = orjson.loads(
        build_context_inspection(prepared, ModelContextLimits.from_capabilities(CAPS)).to_json()
    )
    assert document["provenance"] == [
        {"synthetic": "last_user_request_replay", "message_id": "m7", "sequence": 7}
    ]
