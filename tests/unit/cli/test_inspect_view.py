"""`openwork inspect` (issue 15 point 2; daemon-api.md §3): the bar against the window, the
auto-compact line, World State by section, the largest items."""

from __future__ import annotations

from openwork_core.cli.inspect_view import bar, inspection_lines, read_inspection, tokens_of
from openwork_core.context.world_state.sandbox_policy import SANDBOX_POLICY_TAG


def _body() -> dict[str, object]:
    ws = {"role": "user", "content": [{"type": "text", "text": SANDBOX_POLICY_TAG + "x" * 400}]}
    big = {"role": "assistant", "content": [{"type": "text", "text": "y" * 4000}]}
    return {
        "system": [{"key": "core/agent-system", "content": "s" * 100}],
        "conversation": [ws, big],
        "provenance": [
            {"message_id": "m1", "sequence": 2, "kind": "world_state"},
            {"message_id": "m2", "sequence": 3, "kind": "normal"},
        ],
        "tools": [{"name": "read", "description": "d", "parameters": {}}],
        "budget": {
            "system_context_tokens": 10_000,
            "conversation_tokens": 20_000,
            "tool_surface_tokens": 10_000,
            "estimated_input_tokens": 40_000,
            "reserved_output_tokens": 20_000,
        },
        "limits": {
            "context_window": 100_000,
            "effective_input_tokens": 80_000,
            "auto_compact_token_limit": 72_000,
        },
        "auto_compact_percent": 83.3,
    }


def test_the_bar_is_proportional_to_the_window_and_marks_the_auto_compact_line() -> None:
    top, marker = bar(read_inspection(_body()), width=10)
    assert top == "[SCCTRR....]"
    assert marker.index("|") == 1 + 7  # 72 000 of 100 000 → cell 7 (after the bracket)


def test_world_state_messages_are_named_by_section_with_their_size() -> None:
    view = read_inspection(_body())
    ((item),) = view.world_state
    assert item.label == "runtime/sandbox-policy (body, #2)"
    assert item.tokens == tokens_of(_body()["conversation"][0])  # type: ignore[index]


def test_the_largest_items_come_first_across_regions() -> None:
    view = read_inspection(_body())
    assert [i.region for i in view.largest][:2] == ["conversation", "conversation"]
    assert view.largest[0].label.startswith("assistant #3: yyy")
    lines = inspection_lines("ses_1", view)
    assert (
        lines[0]
        == "session ses_1: 40000 input tokens + 20000 reserved output of a 100000-token window"
    )
    assert "  . free              40000" in lines


def test_the_last_calls_reported_numbers_sit_next_to_the_estimate() -> None:
    """Issue 14 point 5, 9: the inspection's ``usage`` → lines; a miss names its cause."""
    body = _body()
    body["usage"] = {
        "last_call": {
            "turn_id": "t",
            "message_id": "m",
            "created_at": "2026-01-01T00:00:00Z",
            "call": {
                "usage": {
                    "input_tokens": 1200,
                    "cached_input_tokens": 0,
                    "cache_write_tokens": None,
                    "output_tokens": 9,
                },
                "estimated_input_tokens": 4000,
                "input_truncation_suspected": True,
                "cache_miss": {"cause": "prefix_changed", "item": 3},
            },
        },
        "session": {"model_calls": 4},
        "cache_hit_ratio": 0.25,
    }
    lines = inspection_lines("ses_1", read_inspection(body))
    start = lines.index("Provider-reported usage:")
    assert lines[start + 1 :] == [
        "  last call: 1200 input tokens reported (cached 0, written ?), 4000 estimated, 9 output",
        "  warning: the provider saw far fewer tokens than sent (truncated?)",
        "  cache miss: prefix_changed at item 3",
        "  session: 4 calls, cache hit ratio 25.0%",
    ]
    assert "Provider-reported usage:" not in inspection_lines("ses_1", read_inspection(_body()))
