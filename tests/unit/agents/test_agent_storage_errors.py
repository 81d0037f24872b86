"""Storage errors of the sub-agent rows keep stable, unique codes (DESIGN.md §4.5)."""

from __future__ import annotations

from openwork_core.storage.agent_records import ChildSessionRejected, ChildTaskNameTaken
from openwork_core.storage.errors import StorageError


def _all(base: type[StorageError]) -> list[type[StorageError]]:
    found: list[type[StorageError]] = []
    for sub in base.__subclasses__():
        found += [sub, *_all(sub)]
    return found


def test_child_session_errors_are_storage_errors_with_codes_unique_among_storage_errors() -> None:
    classes: list[type[StorageError]] = [StorageError, *_all(StorageError)]
    assert ChildSessionRejected in classes
    assert ChildTaskNameTaken in classes
    # a code is introduced once; a subclass may restate its parent's (docs/architecture.md Errors)
    introduced = [
        c.code
        for c in classes
        if "code" in vars(c)
        and not any(o is not c and issubclass(c, o) and o.code == c.code for o in classes)
    ]
    assert len(introduced) == len(set(introduced)), introduced
    assert ChildSessionRejected.code == "child_session_rejected"
    assert ChildTaskNameTaken.code == "child_task_name_taken"
