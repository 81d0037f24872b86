"""Issue 27 point 3: an MCP tool's input schema normalised to what every supported provider
accepts (the rules of tests/fakes/tool_rules.py, each a real provider refusal)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openwork_core.mcp.schema import MAX_SCHEMA_BYTES, SchemaTooLarge, normalized_schema
from tests.fakes.tool_rules import schema_violations

# The shapes real servers send (zod-to-json-schema, pydantic, hand-written): each breaks a rule.
HOSTILE: dict[str, object] = {
    "not an object": ["a", "list"],
    "no type": {"properties": {"q": {"type": "string"}}},
    "root union": {
        "anyOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "integer"}}},
        ]
    },
    "array without items": {"type": "object", "properties": {"tags": {"type": "array"}}},
    "nullable array": {"type": "object", "properties": {"t": {"type": ["array", "null"]}}},
    "refs": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"child": {"$ref": "#/$defs/Node"}, "tags": {"type": "array"}},
            }
        },
    },
    "dangling ref": {"type": "object", "properties": {"x": {"$ref": "#/definitions/Gone"}}},
    "boolean subschemas": {"type": "object", "properties": {"any": True, "none": False}},
    "bad required": {"type": "object", "properties": {}, "required": [1, "missing", None]},
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_every_shape_a_server_sends_becomes_one_every_provider_accepts(name: str) -> None:
    normalized = normalized_schema(HOSTILE[name])
    assert schema_violations("t", normalized) == []
    assert normalized["type"] == "object"


def test_the_checker_refuses_what_providers_refuse() -> None:
    """The rules above can fail: each raw shape breaks one."""
    broken = [n for n, s in HOSTILE.items() if schema_violations("t", s)]
    assert set(broken) >= {"not an object", "no type", "root union", "array without items", "refs"}


def test_a_root_union_keeps_every_branch_property_and_requires_none() -> None:
    normalized = normalized_schema(HOSTILE["root union"])
    assert normalized == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
    }


def test_a_recursive_ref_is_inlined_once_and_cut_where_it_recurs() -> None:
    node = normalized_schema(HOSTILE["refs"])["properties"]["node"]  # type: ignore[index]
    assert node["properties"]["child"] == {}  # type: ignore[index]
    assert node["properties"]["tags"] == {"type": "array", "items": {}}  # type: ignore[index]


def test_the_same_schema_gives_the_same_bytes() -> None:
    schema = HOSTILE["refs"]
    assert orjson.dumps(normalized_schema(schema)) == orjson.dumps(normalized_schema(schema))


def test_a_schema_over_the_bound_is_refused() -> None:
    big = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "description": "d" * 100} for i in range(200)},
    }
    with pytest.raises(SchemaTooLarge, match=str(MAX_SCHEMA_BYTES)):
        normalized_schema(big)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["type", "properties", "items", "anyOf", "$ref", "required", "x", "$defs"]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=30,
)


@settings(max_examples=300)
@given(json_values)
def test_any_json_value_normalises_to_a_schema_every_provider_accepts(value: Any) -> None:
    try:
        normalized = normalized_schema(value)
    except SchemaTooLarge:
        return
    assert schema_violations("t", normalized) == []
