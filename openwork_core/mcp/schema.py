"""An MCP tool's ``inputSchema`` as every supported provider accepts it (issue 27 point 3;
docs/mcp.md "Schemas"), pure.

The rules, each one a provider's real refusal:

- the root is ``{"type": "object", "properties": {...}}`` (OpenAI: "schema must be a JSON Schema
  of 'type: \"object\"'"; Anthropic: ``input_schema.type`` must be ``object``);
- no ``anyOf``/``oneOf``/``allOf``/``not``/``enum``/``const`` at the root (Anthropic: "input_schema
  does not support oneOf, allOf, or anyOf at the top level"): the branches' properties are merged
  into the root, none of them required;
- every array schema has ``items`` (OpenAI: "array schema missing items");
- local ``$ref``s are inlined and ``$defs``/``definitions`` dropped (no provider resolves them the
  same way; a recursive reference becomes ``{}`` where it recurs); ``$schema``, ``$id`` and
  ``$comment`` are dropped; a boolean sub-schema becomes ``{}``;
- at most ``MAX_DEPTH`` levels and ``MAX_SCHEMA_BYTES`` of compact JSON (a tool whose schema is
  larger is not advertised: its cost is the user's whole window, issue 27).

The same input always gives the same output (keys keep the server's order)."""

from __future__ import annotations

from collections.abc import Mapping

import orjson
from pydantic import JsonValue

from openwork_chat_state.messages import JsonObject

MAX_SCHEMA_BYTES = 16_000
MAX_DEPTH = 16
_DROPPED = frozenset({"$schema", "$id", "$comment", "$anchor", "$dynamicAnchor", "$dynamicRef"})
_DEFS = ("$defs", "definitions")
_COMBINATORS = ("anyOf", "oneOf", "allOf")
_ROOT_DROPPED = frozenset({*_COMBINATORS, "not", "enum", "const", "$ref"})


class SchemaTooLarge(ValueError):
    """The normalised schema is over ``MAX_SCHEMA_BYTES``."""


def _definitions(root: Mapping[str, object]) -> dict[str, object]:
    found: dict[str, object] = {}
    for key in _DEFS:
        value = root.get(key)
        if isinstance(value, dict):
            for name, sub in value.items():
                found.setdefault(f"#/{key}/{name}", sub)
    return found


def _json(value: object) -> JsonValue:
    """A JSON value as parsed JSON has it (the SDK gives dicts, lists and scalars); an integer
    outside 64 bits (valid JSON, which no encoder of ours writes) becomes its decimal text."""
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    return str(value)


class _Cleaner:
    def __init__(self, definitions: dict[str, object]) -> None:
        self._definitions = definitions

    def clean(self, node: object, depth: int, refs: frozenset[str]) -> JsonObject:
        if not isinstance(node, dict) or depth > MAX_DEPTH:
            return {}
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = self._definitions.get(ref)
            if target is None or ref in refs:
                resolved: JsonObject = {}
            else:
                resolved = self.clean(target, depth + 1, refs | {ref})
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return {**resolved, **self.clean(siblings, depth, refs)}
        out: JsonObject = {}
        for key, value in node.items():
            if not isinstance(key, str) or key in _DROPPED or key in _DEFS or key == "$ref":
                continue
            if key == "properties":
                if isinstance(value, dict):
                    out[key] = {
                        str(name): self.clean(sub, depth + 1, refs) for name, sub in value.items()
                    }
            elif key in ("items", "additionalProperties", "not", "contains", "propertyNames"):
                if isinstance(value, bool) and key == "additionalProperties":
                    out[key] = value
                elif key == "items" and isinstance(value, list):
                    out[key] = {"anyOf": [self.clean(v, depth + 1, refs) for v in value]}
                else:
                    out[key] = self.clean(value, depth + 1, refs)
            elif key in _COMBINATORS or key == "prefixItems":
                if isinstance(value, list):
                    out[key] = [self.clean(v, depth + 1, refs) for v in value]
            elif key == "required":
                if isinstance(value, list):
                    out[key] = list(dict.fromkeys(v for v in value if isinstance(v, str)))
            elif key == "type":
                if isinstance(value, str) or (
                    isinstance(value, list) and value and all(isinstance(v, str) for v in value)
                ):
                    out[key] = _json(value)
            else:
                out[key] = _json(value)
        kind = out.get("type")
        if (kind == "array" or (isinstance(kind, list) and "array" in kind)) and "items" not in out:
            out["items"] = {}
        return out


def _merged_root(root: JsonObject) -> JsonObject:
    properties = root.get("properties")
    merged: JsonObject = dict(properties) if isinstance(properties, dict) else {}
    for key in _COMBINATORS:
        branches = root.get(key)
        for branch in branches if isinstance(branches, list) else ():
            sub = branch.get("properties") if isinstance(branch, dict) else None
            if isinstance(sub, dict):
                for name, schema in sub.items():
                    merged.setdefault(name, schema)
    out: JsonObject = {"type": "object", "properties": merged}
    for key, value in root.items():
        if key not in _ROOT_DROPPED and key not in out:
            out[key] = value
    required = out.get("required")
    if isinstance(required, list):
        kept = [r for r in required if isinstance(r, str) and r in merged]
        if kept:
            out["required"] = list(kept)
        else:
            del out["required"]
    return out


def normalized_schema(schema: object) -> JsonObject:
    """The provider-neutral form of ``schema``; ``SchemaTooLarge`` past the bound."""
    root = schema if isinstance(schema, dict) else {}
    cleaner = _Cleaner(_definitions(root))
    normalized = _merged_root(cleaner.clean(root, 0, frozenset()))
    size = len(orjson.dumps(normalized))
    if size > MAX_SCHEMA_BYTES:
        raise SchemaTooLarge(f"its input schema is {size} bytes (at most {MAX_SCHEMA_BYTES})")
    return normalized
