"""Issue 26 §5 end to end: `GET /v1/sessions/{sid}/files` on a real daemon ranks the session's
workspace files by fuzzy match, honours .gitignore, never lists anything outside the workspace
and sees files the agent just wrote."""

from __future__ import annotations

import os
from pathlib import Path

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.daemon import run_turn_and_wait, start_daemon


async def test_file_search_ranks_the_workspace_honours_gitignore_and_sees_new_files(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    workspace = tmp_path / "ws"
    for rel in ("src/session/runner.py", "src/session_runner_notes.md", "docs/sr.txt"):
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(rel)
    (workspace / "build").mkdir()
    (workspace / "build" / "session_runner.py").write_text("generated")
    (workspace / ".gitignore").write_text("build/\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "session_runner_secret.py").write_text("secret")
    (workspace / "linked").symlink_to(outside)
    (workspace / os.fsdecode(b"not-utf8-\xff.md")).write_bytes(b"x")  # a name of any bytes
    fake_provider.push(
        Reply(
            tool_calls=(ToolCallSpec("c1", "write", {"path": "src/new_runner.py", "content": "x"}),)
        ),
        Reply(text="written"),
    )
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as client:
            created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
            sid = created.json()["session_id"]
            found = await client.get(f"/v1/sessions/{sid}/files", params={"query": "sesrun"})
            assert found.status_code == 200, found.text
            files = found.json()["files"]
            # both match at word starts; after `/` earns more than after `_` (fzf's path scheme)
            assert [f["path"] for f in files] == [
                "src/session/runner.py",
                "src/session_runner_notes.md",
            ]
            assert files[0]["score"] > files[1]["score"]
            assert set(files[0]) == {"path", "score"}

            await run_turn_and_wait(client, sid, "write a file", "req-1")
            after = await client.get(
                f"/v1/sessions/{sid}/files", params={"query": "runner", "limit": 10}
            )
            paths = [f["path"] for f in after.json()["files"]]
            assert "src/new_runner.py" in paths
            assert not any(p.startswith(("build/", "linked")) for p in paths)

            limited = await client.get(
                f"/v1/sessions/{sid}/files", params={"query": "s", "limit": 1}
            )
            assert len(limited.json()["files"]) == 1

            # a name that is not UTF-8 answered 500 (its lone surrogate could not be written as
            # JSON); it is found, written with the storage rule's escape as the tools show it
            untrusted = await client.get(f"/v1/sessions/{sid}/files", params={"query": "utf8"})
            assert untrusted.status_code == 200, untrusted.text
            assert [f["path"] for f in untrusted.json()["files"]] == ["not-utf8-\\udcff.md"]
    finally:
        assert await daemon.stop() == 0


async def test_file_search_refuses_a_bad_limit_and_an_unknown_session(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as client:
            sid = (await client.post("/v1/sessions", json={"workspace": str(workspace)})).json()[
                "session_id"
            ]
            bad = await client.get(f"/v1/sessions/{sid}/files", params={"query": "a", "limit": 0})
            assert (bad.status_code, bad.json()["error"]["code"]) == (422, "invalid_request")
            unknown = await client.get("/v1/sessions/ses_unknown/files", params={"query": "a"})
            assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "not_found")
            empty = await client.get(f"/v1/sessions/{sid}/files", params={"query": ""})
            assert empty.json() == {"files": []}
    finally:
        assert await daemon.stop() == 0
