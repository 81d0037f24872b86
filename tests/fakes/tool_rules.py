"""The tool-definition rules the real providers enforce, checked on every request body the fake
provider receives (issue 27 point 3: MCP schemas must be what every supported provider accepts).

Each rule is a refusal a real API answers with (HTTP 400):

- OpenAI (Chat Completions and Responses) and Anthropic: a tool name matches
  ``^[a-zA-Z0-9_-]{1,64}$``, and names are unique;
- both: the parameters / ``input_schema`` root is an object schema (``"type": "object"``);
- Anthropic: no ``oneOf``/``anyOf``/``allOf`` at the root of ``input_schema``;
- OpenAI: every array schema has ``items`` ("array schema missing items");
- a ``$ref`` only where the document defines what it points to.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_ROOT_COMBINATORS = ("oneOf", "anyOf", "allOf")


def _subschemas(node: object, path: str) -> Iterator[tuple[str, Mapping[str, object]]]:
    if isinstance(node, Mapping):
        yield path, node
        for key, value in node.items():
            if key in ("properties", "$defs", "definitions") and isinstance(value, Mapping):
                for name, sub in value.items():
                    yield from _subschemas(sub, f"{path}/{key}/{name}")
            elif key in ("items", "additionalProperties", "not", "contains", "propertyNames"):
                yield from _subschemas(value, f"{path}/{key}")
            elif key in (*_ROOT_COMBINATORS, "prefixItems") and isinstance(value, list):
                for index, sub in enumerate(value):
                    yield from _subschemas(sub, f"{path}/{key}/{index}")


def schema_violations(name: str, schema: object) -> list[str]:
    found: list[str] = []
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return [f"tool {name}: the schema root is not an object schema"]
    for key in _ROOT_COMBINATORS:
        if key in schema:
            found.append(f"tool {name}: {key} at the root of the schema")
    defined = {
        f"#/{key}/{n}"
        for key in ("$defs", "definitions")
        if isinstance(schema.get(key), Mapping)
        for n in schema[key]  # type: ignore[union-attr]
    }
    for path, node in _subschemas(schema, ""):
        kind = node.get("type")
        if (
            kind == "array" or (isinstance(kind, list) and "array" in kind)
        ) and "items" not in node:
            found.append(f"tool {name}: the array schema at {path or '/'} has no items")
        ref = node.get("$ref")
        if ref is not None and (not isinstance(ref, str) or ref not in defined):
            found.append(f"tool {name}: $ref {ref!r} at {path or '/'} points nowhere")
    return found


def _definitions(protocol: str, body: Mapping[str, object]) -> Iterator[tuple[object, object]]:
    tools = body.get("tools")
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, Mapping):
            yield None, None
        elif protocol == "chat":
            function = tool.get("function")
            function = function if isinstance(function, Mapping) else {}
            yield function.get("name"), function.get("parameters")
        elif protocol == "responses":
            yield tool.get("name"), tool.get("parameters")
        else:
            yield tool.get("name"), tool.get("input_schema")


def tool_violations(protocol: str, body: Mapping[str, object]) -> list[str]:
    """``protocol``: ``chat``, ``responses`` or ``anthropic``."""
    found: list[str] = []
    seen: set[str] = set()
    for name, schema in _definitions(protocol, body):
        if not isinstance(name, str) or not NAME.match(name):
            found.append(f"tool name {name!r} does not match {NAME.pattern}")
            continue
        if name in seen:
            found.append(f"tool name {name!r} is advertised twice")
        seen.add(name)
        found.extend(schema_violations(name, schema))
    return found
