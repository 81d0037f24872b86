"""Runtime API keys (issue 14 point 7): a 0600 file written atomically under ``run/`` (0700),
never shown, rotated and deleted in place."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from openwork_core.storage.provider_keys import ProviderKeys, keys_path, read_keys


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_stored_key_is_in_a_0600_file_under_a_0700_run_dir(tmp_path: Path) -> None:
    path = keys_path(tmp_path)
    keys = ProviderKeys(path)
    keys.set("work", "sk-one")
    assert (_mode(path), _mode(path.parent)) == (0o600, 0o700)
    assert json.loads(path.read_text()) == {"work": "sk-one"}
    assert [p.name for p in path.parent.iterdir()] == ["provider-keys.json"], "no temp file left"


def test_rotation_and_deletion_are_seen_at_once_and_by_a_new_reader(tmp_path: Path) -> None:
    path = keys_path(tmp_path)
    keys = ProviderKeys(path)
    keys.set("a", "sk-old")
    keys.set("b", "sk-b")
    keys.set("a", "sk-new")
    assert keys.get("a") == "sk-new"
    keys.set("b", None)
    assert keys.get("b") is None
    assert read_keys(path) == {"a": "sk-new"}
    assert ProviderKeys(path).get("a") == "sk-new"


def test_the_repr_never_shows_a_key(tmp_path: Path) -> None:
    keys = ProviderKeys(keys_path(tmp_path))
    keys.set("a", "sk-secret-123")
    assert "sk-secret-123" not in repr(keys)


def test_a_missing_or_corrupt_file_is_no_keys(tmp_path: Path) -> None:
    path = keys_path(tmp_path)
    assert read_keys(path) == {}
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert read_keys(path) == {}
    path.write_text(json.dumps({"a": 5, "b": "", "c": "sk"}))
    assert read_keys(path) == {"c": "sk"}
