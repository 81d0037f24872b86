"""Issue 27 point 3: MCP tools are named ``mcp__<server>__<tool>``, sanitised to
``[A-Za-z0-9_-]``, at most 64 characters, collisions made unique deterministically."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from openwork_core.mcp.names import MAX_NAME_CHARS, qualified_names
from tests.fakes.tool_rules import NAME


def test_a_plain_tool_is_named_mcp_server_tool() -> None:
    assert qualified_names([("git", "git_status")]) == {
        ("git", "git_status"): "mcp__git__git_status"
    }


def test_characters_outside_the_provider_alphabet_become_underscores() -> None:
    names = qualified_names([("my.server", "get time/now é")])
    assert names == {("my.server", "get time/now é"): "mcp__my_server__get_time_now__"}


def test_two_tools_that_sanitise_to_one_name_both_get_a_hashed_distinct_name() -> None:
    names = qualified_names([("s", "a.b"), ("s", "a_b"), ("s", "c")])
    assert names[("s", "c")] == "mcp__s__c"
    assert names[("s", "a.b")] != names[("s", "a_b")]
    assert all(n.startswith("mcp__s__a_b_") for k, n in names.items() if k != ("s", "c"))


def test_a_long_name_is_cut_to_64_characters_with_a_hash_of_the_raw_name() -> None:
    long_a, long_b = "x" * 100 + "a", "x" * 100 + "b"
    names = qualified_names([("srv", long_a), ("srv", long_b)])
    assert {len(n) for n in names.values()} == {MAX_NAME_CHARS}
    assert names[("srv", long_a)] != names[("srv", long_b)]


@given(
    st.lists(
        st.tuples(st.text(min_size=1, max_size=70), st.text(min_size=1, max_size=90)),
        min_size=1,
        max_size=30,
    )
)
def test_names_are_unique_valid_and_independent_of_listing_order(
    pairs: list[tuple[str, str]],
) -> None:
    names = qualified_names(pairs)
    assert len(set(names.values())) == len(set(pairs))
    assert all(NAME.match(n) for n in names.values())
    shuffled = list(pairs)
    random.Random(7).shuffle(shuffled)
    assert qualified_names(shuffled) == names
