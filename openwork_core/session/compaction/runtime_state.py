"""Compaction runtime state (compaction.md §4, update-plan.md §6).

``CompactionRuntimeState`` is stored as a JSON object on each checkpoint::

    {"schemaVersion": 1, "editedPaths": [...],
     "extensions": {"<key>": {"schemaVersion": 1, "value": ...}}, "warnings": [...]}

``collect_runtime_state`` calls the contributors sorted by key; both built-ins fail the compaction
when they cannot decode their input:

- ``file_changes``: re-derived every time from the ``file_change`` artifacts stored in the
  tool-result blocks of ALL persisted messages (``artifacts`` key of the stored content, each
  artifact shaped like ``openwork_tools.results.FileChange.to_json``); undone ones are excluded;
  each path is cut to 1 024 characters; deduplicated, sorted, at most 128.
- ``turn_plan``: the running Turn's plan overwrites (an empty plan too); ``None`` (no successful
  ``update_plan`` yet, manual, rewind) keeps the previous checkpoint's value.

Unknown extension keys of the previous checkpoint are copied forward unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import orjson
from pydantic import JsonValue

from openwork_core.plan.model import PlanStep, TurnPlan, steps_from_json, steps_to_json
from openwork_core.plan.reminder import TURN_PLAN_EXTENSION_KEY, TURN_PLAN_EXTENSION_SCHEMA_VERSION
from openwork_core.session.compaction.errors import RuntimeStateInvalid

RUNTIME_STATE_SCHEMA_VERSION = 1
FILE_CHANGES_KEY = "file_changes"
TURN_PLAN_KEY = TURN_PLAN_EXTENSION_KEY
TURN_PLAN_SCHEMA_VERSION = TURN_PLAN_EXTENSION_SCHEMA_VERSION
MAX_EDITED_PATHS = 128
MAX_EDITED_PATH_CHARS = 1_024
FILE_CHANGE_ARTIFACT = "file_change"


def _require(condition: bool, what: str) -> None:
    if not condition:
        raise RuntimeStateInvalid(f"stored runtime state is not decodable: {what}")


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredPlan:
    """The ``turn_plan`` extension value: ``{"explanation": …, "steps": [{"step", "status"}]}``."""

    explanation: str | None
    steps: tuple[PlanStep, ...]

    @classmethod
    def of(cls, plan: TurnPlan) -> StoredPlan:
        return cls(explanation=plan.explanation, steps=plan.steps)

    def to_json(self) -> JsonValue:
        steps: JsonValue = orjson.loads(steps_to_json(self.steps))
        return {"explanation": self.explanation, "steps": steps}

    @classmethod
    def from_json(cls, value: JsonValue) -> StoredPlan:
        _require(isinstance(value, dict), "turn_plan is not an object")
        assert isinstance(value, dict)
        explanation = value.get("explanation")
        _require(explanation is None or isinstance(explanation, str), "turn_plan explanation")
        try:
            steps = steps_from_json(orjson.dumps(value.get("steps")))
        except ValueError as exc:
            raise RuntimeStateInvalid(f"stored turn_plan steps are not decodable: {exc}") from exc
        return cls(explanation=explanation if isinstance(explanation, str) else None, steps=steps)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtensionEntry:
    schema_version: int
    value: JsonValue


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionRuntimeState:
    schema_version: int = RUNTIME_STATE_SCHEMA_VERSION
    edited_paths: tuple[str, ...] = ()
    extensions: tuple[tuple[str, ExtensionEntry], ...] = ()
    """Sorted by key."""
    warnings: tuple[str, ...] = ()

    def extension(self, key: str) -> ExtensionEntry | None:
        return next((entry for k, entry in self.extensions if k == key), None)

    def turn_plan(self) -> StoredPlan | None:
        entry = self.extension(TURN_PLAN_KEY)
        return None if entry is None else StoredPlan.from_json(entry.value)

    def to_json(self) -> str:
        return orjson.dumps(
            {
                "schemaVersion": self.schema_version,
                "editedPaths": list(self.edited_paths),
                "extensions": {
                    key: {"schemaVersion": entry.schema_version, "value": entry.value}
                    for key, entry in self.extensions
                },
                "warnings": list(self.warnings),
            }
        ).decode()

    @classmethod
    def from_json(cls, text: str) -> CompactionRuntimeState:
        """Decode a stored state; a root ``schemaVersion`` other than 1 fails (§4)."""
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise RuntimeStateInvalid(f"stored runtime state is not JSON: {exc}") from exc
        _require(isinstance(data, dict), "not an object")
        version = data.get("schemaVersion")
        if version != RUNTIME_STATE_SCHEMA_VERSION:
            raise RuntimeStateInvalid(f"unsupported runtime state schemaVersion {version!r}")
        paths = data.get("editedPaths", [])
        _require(isinstance(paths, list) and all(isinstance(p, str) for p in paths), "editedPaths")
        warnings = data.get("warnings", [])
        _require(
            isinstance(warnings, list) and all(isinstance(w, str) for w in warnings), "warnings"
        )
        raw_extensions = data.get("extensions", {})
        _require(isinstance(raw_extensions, dict), "extensions")
        extensions: list[tuple[str, ExtensionEntry]] = []
        for key in sorted(raw_extensions):
            raw = raw_extensions[key]
            _require(isinstance(raw, dict) and type(raw.get("schemaVersion")) is int, key)
            entry = ExtensionEntry(schema_version=raw["schemaVersion"], value=raw.get("value"))
            extensions.append((key, entry))
        return cls(
            schema_version=RUNTIME_STATE_SCHEMA_VERSION,
            edited_paths=tuple(paths),
            extensions=tuple(extensions),
            warnings=tuple(warnings),
        )


def _file_change_paths(content: str) -> list[str]:
    """Paths of the not-undone ``file_change`` artifacts in one message's stored content."""
    try:
        blocks = orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        raise RuntimeStateInvalid(f"stored message content is not JSON: {exc}") from exc
    if not isinstance(blocks, list):
        raise RuntimeStateInvalid("stored message content is not a block array")
    paths: list[str] = []
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        artifacts = block.get("artifacts")
        if artifacts is None:
            continue
        if not isinstance(artifacts, list):
            raise RuntimeStateInvalid("tool result artifacts are not an array")
        for artifact in artifacts:
            if not isinstance(artifact, dict) or not isinstance(artifact.get("type"), str):
                raise RuntimeStateInvalid("undecodable tool result artifact")
            if artifact["type"] != FILE_CHANGE_ARTIFACT:
                continue
            path = artifact.get("path")
            undone = artifact.get("undone", False)
            if not isinstance(path, str) or not path or not isinstance(undone, bool):
                raise RuntimeStateInvalid("undecodable file_change artifact")
            if not undone:
                paths.append(path)
    return paths


def edited_paths(message_contents: Sequence[str]) -> tuple[str, ...]:
    """The ``file_changes`` contributor: cut, deduplicated, sorted, at most 128."""
    found = {p[:MAX_EDITED_PATH_CHARS] for c in message_contents for p in _file_change_paths(c)}
    return tuple(sorted(found)[:MAX_EDITED_PATHS])


def collect_runtime_state(
    previous: CompactionRuntimeState | None,
    message_contents: Sequence[str],
    plan: TurnPlan | None,
) -> CompactionRuntimeState:
    """Contributors in key order (``file_changes``, ``turn_plan``) on top of ``previous``.
    ``plan`` is the running Turn's ``current_plan``; ``None`` keeps the previous value."""
    extensions = dict(previous.extensions) if previous is not None else {}
    paths = edited_paths(message_contents)
    if plan is not None:
        extensions[TURN_PLAN_KEY] = ExtensionEntry(
            schema_version=TURN_PLAN_SCHEMA_VERSION, value=StoredPlan.of(plan).to_json()
        )
    elif TURN_PLAN_KEY in extensions:
        StoredPlan.from_json(extensions[TURN_PLAN_KEY].value)  # must stay decodable
    return CompactionRuntimeState(
        edited_paths=paths,
        extensions=tuple(sorted(extensions.items())),
    )
