"""Runtime state: contributors, edited paths, plan carry-forward, JSON round trip (compaction.md
§4, update-plan.md §6)."""

from __future__ import annotations

import orjson
import pytest

from openwork_chat_state.messages import Message, Role, TextBlock, ToolResultBlock, ToolResultState
from openwork_core.session.compaction.errors import RuntimeStateInvalid
from openwork_core.session.compaction.runtime_state import (
    CompactionRuntimeState,
    ExtensionEntry,
    StoredPlan,
    collect_runtime_state,
    edited_paths,
)
from openwork_core.storage.codec import encode_content
from openwork_tools.results import FileChange
from tests.unit.compaction.compaction_support import turn_plan


def change(path: str, undone: bool = False) -> FileChange:
    return FileChange(
        change_id=f"fc-{path}",
        path=path,
        kind="modified",
        additions=1,
        deletions=0,
        hunks=(),
        before_hash="a",
        after_hash="b",
        before_content="x",
        after_content="y",
        undone=undone,
    )


def stored_result(*changes: FileChange, call_id: str = "c1") -> str:
    """The stored content of a tool message, exactly as the runner writes it."""
    message = Message(
        role=Role.TOOL,
        content=(
            ToolResultBlock(
                id=call_id,
                name="edit",
                output=(TextBlock(text="ok"),),
                state=ToolResultState.SUCCESS,
            ),
        ),
    )
    return encode_content(message, tuple(c.to_json() for c in changes))


PLAN = turn_plan(("read schema", "completed"), ("add migration", "in_progress"), explanation="why")


def test_edited_paths_come_from_file_change_artifacts_of_all_messages_sorted_and_deduplicated() -> (
    None
):
    """§4 file_changes: re-derived from every persisted message."""
    contents = [
        orjson.dumps([{"type": "text", "text": "hello"}]).decode(),
        stored_result(change("/w/b.py"), change("/w/a.py")),
        stored_result(change("/w/a.py"), call_id="c2"),
    ]
    assert edited_paths(contents) == ("/w/a.py", "/w/b.py")


def test_undone_file_changes_are_not_edited_paths() -> None:
    """§10: edited paths only from non-undone artifacts."""
    contents = [stored_result(change("/w/undone.py", undone=True), change("/w/kept.py"))]
    assert edited_paths(contents) == ("/w/kept.py",)


def test_paths_are_cut_to_1024_characters_and_at_most_128_are_kept() -> None:
    long = "/" + "p" * 2_000
    many = [change(f"/w/{n:03}.py") for n in range(200)]
    paths = edited_paths([stored_result(change(long), *many)])
    assert len(paths) == 128
    assert all(len(p) <= 1_024 for p in paths)
    assert paths[0] == long[:1_024]
    assert paths == tuple(sorted(paths))


@pytest.mark.parametrize(
    "artifact",
    [
        "not an object",
        {"kind": "modified"},
        {"type": "file_change"},
        {"type": "file_change", "path": 7},
        {"type": "file_change", "path": "/a", "undone": "yes"},
    ],
)
def test_an_undecodable_artifact_fails_the_compaction(artifact: object) -> None:
    content = orjson.dumps([{"type": "tool_result", "id": "c", "artifacts": [artifact]}]).decode()
    with pytest.raises(RuntimeStateInvalid):
        edited_paths([content])


def test_artifacts_of_other_kinds_are_ignored() -> None:
    content = orjson.dumps(
        [{"type": "tool_result", "artifacts": [{"type": "image_preview"}]}]
    ).decode()
    assert edited_paths([content]) == ()


def test_a_plan_of_the_running_turn_overwrites_and_an_empty_plan_overwrites_too() -> None:
    """update-plan.md §6: non-empty and empty plans both overwrite extensions["turn_plan"]."""
    previous = collect_runtime_state(None, [], PLAN)
    assert previous.turn_plan() == StoredPlan.of(PLAN)
    cleared = collect_runtime_state(previous, [], turn_plan())
    assert cleared.turn_plan() == StoredPlan(explanation=None, steps=())


def test_no_plan_keeps_the_previous_checkpoints_plan() -> None:
    """None (manual, rewind, no update_plan yet) carries the latest value forward."""
    previous = collect_runtime_state(None, [], PLAN)
    assert collect_runtime_state(previous, [], None).turn_plan() == StoredPlan.of(PLAN)
    assert collect_runtime_state(None, [], None).turn_plan() is None


def test_edited_paths_are_re_derived_not_copied_from_the_previous_checkpoint() -> None:
    previous = CompactionRuntimeState(edited_paths=("/old.py",))
    assert collect_runtime_state(previous, [], None).edited_paths == ()


def test_unknown_extension_keys_are_copied_forward_unchanged() -> None:
    """§10: unknown extensions round-trip."""
    stored = (
        '{"schemaVersion":1,"editedPaths":[],"extensions":{"zeta":{"schemaVersion":3,'
        '"value":{"a":[1,2]}},"alpha":{"schemaVersion":1,"value":null}},"warnings":[]}'
    )
    state = collect_runtime_state(CompactionRuntimeState.from_json(stored), [], PLAN)
    assert [k for k, _ in state.extensions] == ["alpha", "turn_plan", "zeta"]
    assert state.extension("zeta") == ExtensionEntry(schema_version=3, value={"a": [1, 2]})


def test_runtime_state_json_round_trips_byte_for_byte() -> None:
    state = collect_runtime_state(None, [stored_result(change("/w/a.py"))], PLAN)
    text = state.to_json()
    assert CompactionRuntimeState.from_json(text) == state
    assert CompactionRuntimeState.from_json(text).to_json() == text
    assert orjson.loads(text) == {
        "schemaVersion": 1,
        "editedPaths": ["/w/a.py"],
        "extensions": {
            "turn_plan": {
                "schemaVersion": 1,
                "value": {
                    "explanation": "why",
                    "steps": [
                        {"step": "read schema", "status": "completed"},
                        {"step": "add migration", "status": "in_progress"},
                    ],
                },
            }
        },
        "warnings": [],
    }


def test_the_column_default_decodes_as_the_empty_state() -> None:
    default = '{"schemaVersion":1,"editedPaths":[],"extensions":{},"warnings":[]}'
    assert CompactionRuntimeState.from_json(default) == CompactionRuntimeState()


@pytest.mark.parametrize(
    "stored",
    [
        '{"schemaVersion":2,"editedPaths":[],"extensions":{},"warnings":[]}',
        '{"editedPaths":[]}',
        "[]",
        "not json",
        '{"schemaVersion":1,"editedPaths":[1]}',
        '{"schemaVersion":1,"extensions":{"k":{"value":1}}}',
    ],
)
def test_a_root_schema_version_other_than_1_or_a_malformed_state_fails(stored: str) -> None:
    with pytest.raises(RuntimeStateInvalid):
        CompactionRuntimeState.from_json(stored)


def test_a_malformed_stored_plan_fails_the_compaction_when_carried_forward() -> None:
    stored = '{"schemaVersion":1,"extensions":{"turn_plan":{"schemaVersion":1,"value":{"steps":[{"step":"x","status":"done"}]}}}}'
    with pytest.raises(RuntimeStateInvalid):
        collect_runtime_state(CompactionRuntimeState.from_json(stored), [], None)
