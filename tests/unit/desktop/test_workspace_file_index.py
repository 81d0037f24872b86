"""Issue 26 §5: the file search lists the workspace's files honouring .gitignore, never outside
the workspace, and sees the tree as it is at each query."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from openwork_core.desktop.file_index import WorkspaceFileIndex


def _tree(root: Path, files: list[str]) -> None:
    for rel in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rel)


def test_gitignore_files_are_honoured_from_the_root_down_each_relative_to_its_directory(
    tmp_path: Path,
) -> None:
    _tree(tmp_path, ["a.py", "a.log", "build/out.py", "pkg/b.py", "pkg/gen/c.py", "pkg/keep.tmp"])
    (tmp_path / ".gitignore").write_text("*.log\nbuild/\n")
    (tmp_path / "pkg" / ".gitignore").write_text("/gen\n*.tmp\n!keep.tmp\n")
    listed = WorkspaceFileIndex(tmp_path).paths()
    assert list(listed) == [".gitignore", "a.py", "pkg/.gitignore", "pkg/b.py", "pkg/keep.tmp"]


def test_git_internals_and_skipped_directories_are_never_listed(tmp_path: Path) -> None:
    _tree(tmp_path, [".git/config", ".git/objects/ab/cd", "secret/key", ".github/ci.yml", "x.py"])
    listed = WorkspaceFileIndex(tmp_path, skip=frozenset({tmp_path / "secret"})).paths()
    assert list(listed) == [".github/ci.yml", "x.py"]


def test_symlinks_are_not_followed_so_nothing_outside_the_workspace_is_listed(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    _tree(outside, ["passwords.txt"])
    workspace = tmp_path / "ws"
    _tree(workspace, ["main.py"])
    (workspace / "link-dir").symlink_to(outside)
    (workspace / "link-file").symlink_to(outside / "passwords.txt")
    assert list(WorkspaceFileIndex(workspace).paths()) == ["main.py"]


def test_each_query_sees_files_created_and_deleted_since_the_last_one(tmp_path: Path) -> None:
    _tree(tmp_path, ["src/a.py"])
    index = WorkspaceFileIndex(tmp_path)
    assert list(index.paths()) == ["src/a.py"]
    _tree(tmp_path, ["src/deep/new.py", "top.py"])
    assert list(index.paths()) == ["src/a.py", "src/deep/new.py", "top.py"]
    (tmp_path / "src" / "a.py").unlink()
    (tmp_path / "src" / "deep" / "new.py").unlink()
    (tmp_path / "src" / "deep").rmdir()
    assert list(index.paths()) == ["top.py"]


def test_an_edited_gitignore_applies_to_its_whole_subtree_at_the_next_query(
    tmp_path: Path,
) -> None:
    _tree(tmp_path, ["pkg/a.py", "pkg/sub/b.log", "pkg/sub/c.py"])
    ignore = tmp_path / "pkg" / ".gitignore"
    ignore.write_text("")
    index = WorkspaceFileIndex(tmp_path)
    assert "pkg/sub/b.log" in index.paths()
    ignore.write_text("*.log\n")  # maybe in the same clock tick: the racy rule must catch it
    assert list(index.paths()) == ["pkg/.gitignore", "pkg/a.py", "pkg/sub/c.py"]


def test_an_unchanged_tree_gives_back_the_same_list(tmp_path: Path) -> None:
    """The search rebuilds its prepared paths only when this list changes (issue 26 §5 speed)."""
    _tree(tmp_path, ["a.py", "b/c.py"])
    index = WorkspaceFileIndex(tmp_path)
    assert index.paths() is index.paths()


def test_the_list_is_capped_and_says_so(tmp_path: Path) -> None:
    _tree(tmp_path, [f"f{i}.py" for i in range(10)])
    index = WorkspaceFileIndex(tmp_path, max_files=4)
    assert len(index.paths()) == 4
    assert index.truncated


def test_a_workspace_that_is_gone_lists_nothing(tmp_path: Path) -> None:
    assert list(WorkspaceFileIndex(tmp_path / "missing").paths()) == []


def test_a_directory_listed_long_after_its_last_change_is_not_listed_again(
    tmp_path: Path,
) -> None:
    """Only racy directories are listed at every use: an old one is trusted by its time."""
    _tree(tmp_path, ["old/a.py"])
    old = tmp_path / "old"
    os.utime(old, ns=(0, 0))
    index = WorkspaceFileIndex(tmp_path)
    assert list(index.paths()) == ["old/a.py"]
    (old / "b.py").write_text("")
    os.utime(old, ns=(0, 0))  # a change that did not move the time is not seen: trusted
    assert list(index.paths()) == ["old/a.py"]


async def test_a_fifo_named_gitignore_is_skipped_not_waited_on(tmp_path: Path) -> None:
    """A workspace is untrusted: a FIFO named ``.gitignore`` blocked the index's read until a
    writer came (the file search never answered). It is no ignore file and, not being a regular
    file, is not listed. Bounded: 10 s (on the old code the blocked reader is let go in
    ``finally``)."""
    _tree(tmp_path, ["a.py", "sub/b.py"])
    fifo = tmp_path / "sub" / ".gitignore"
    os.mkfifo(fifo)
    try:
        async with asyncio.timeout(10):
            listed = await asyncio.to_thread(WorkspaceFileIndex(tmp_path).paths)
        assert list(listed) == ["a.py", "sub/b.py"]
    finally:
        os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))
