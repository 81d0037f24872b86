"""Input schemas generated from the same pydantic models that parse the input (tools.md §2)."""

from __future__ import annotations

import copy
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError
from pydantic.alias_generators import to_camel

from openwork_chat_state.messages import JsonObject
from openwork_tools.prepared import SandboxPermissionsInput

ESCALATION_FIELDS = ("sandboxPermissions", "justification")

M = TypeVar("M", bound=BaseModel)


class ToolInput(BaseModel):
    """Base of every tool input: camelCase names, frozen, unknown fields ignored."""

    model_config = ConfigDict(alias_generator=to_camel, frozen=True, extra="ignore")


class EscalationInput(ToolInput):
    """The escalation parameters carried only by bash, write and edit (permissions-sandbox §4)."""

    sandbox_permissions: SandboxPermissionsInput | None = Field(
        default=None,
        description=(
            "Extra paths, or the network, this one call needs beyond the sandbox; the user is "
            "asked to approve."
        ),
    )
    justification: str | None = Field(
        default=None,
        description="One sentence the user will read; required with sandboxPermissions.",
    )


def _strip_titles(node: JsonValue) -> JsonValue:
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: JsonObject = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: _strip_titles(sub) for name, sub in value.items()}
        else:
            out[key] = _strip_titles(value)
    return out


def _refs(node: JsonValue, found: set[str]) -> None:
    if isinstance(node, list):
        for v in node:
            _refs(v, found)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                found.add(value.rsplit("/", 1)[-1])
            else:
                _refs(value, found)


def _drop_escalation(schema: JsonObject) -> JsonObject:
    schema = copy.deepcopy(schema)
    props = schema.get("properties")
    if isinstance(props, dict):
        for name in ESCALATION_FIELDS:
            props.pop(name, None)
    required = schema.get("required")
    if isinstance(required, list):
        schema["required"] = [r for r in required if r not in ESCALATION_FIELDS]
    defs = schema.get("$defs")
    while isinstance(defs, dict) and defs:
        used: set[str] = set()
        _refs({k: v for k, v in schema.items() if k != "$defs"}, used)
        for name, sub in defs.items():
            if name in used:
                _refs(sub, used)
        unused = [name for name in defs if name not in used]
        if not unused:
            break
        for name in unused:
            del defs[name]
    if isinstance(defs, dict) and not defs:
        del schema["$defs"]
    return schema


def input_schema(model: type[BaseModel], *, escalation: bool) -> JsonObject:
    """The model's JSON schema without ``$schema``/``title``; escalation params (last) only if
    asked."""
    raw = model.model_json_schema(by_alias=True)
    raw.pop("$schema", None)
    stripped = _strip_titles(raw)
    assert isinstance(stripped, dict)
    if not escalation:
        return _drop_escalation(stripped)
    props = stripped.get("properties")
    if isinstance(props, dict):
        tool_own = {k: v for k, v in props.items() if k not in ESCALATION_FIELDS}
        stripped["properties"] = tool_own | {k: props[k] for k in ESCALATION_FIELDS if k in props}
    return stripped


def parse_input(model: type[M], input_json: str) -> M | str:
    """The parsed input, or the ``invalid tool input: ...`` text (tools.md §2)."""
    try:
        return model.model_validate_json(input_json or "{}")
    except ValidationError as exc:
        parts = []
        for err in exc.errors(include_url=False):
            loc = ".".join(str(p) for p in err["loc"]) or "input"
            parts.append(f"{loc}: {err['msg']}")
        return "invalid tool input: " + "; ".join(parts)
