"""Issue 22 at the tool level, without a process: the network grant's schema and the credential
tier of grep/glob/list (bash's own /tmp, the start-up files and the spill total run real bwrap in
tests/integration/tools/test_bash_hostile.py)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path

from openwork_tools.builtin.bash import BashInput
from openwork_tools.builtin.registry import BUILTIN_TOOL_IDS, builtin_registry
from openwork_tools.context import ToolSessionContext
from openwork_tools.policy import NETWORK_GRANT_LINE
from openwork_tools.registry import FinalizedToolset, ToolsetConfig
from openwork_tools.regular_file import NOT_REGULAR
from openwork_tools.results import ToolErrorCode, ToolStatus
from openwork_tools.schema import input_schema, parse_input
from tests.support.tools import call_ctx


def test_the_network_grant_is_one_field_of_sandbox_permissions() -> None:
    """Issue 22 point 2 (docs/tool-surface.md): ``{"network": true}`` alone is a valid request,
    ``paths`` is optional then; an empty request is invalid; the field's description is the one
    fixed line the sandbox policy also shows."""
    ok = parse_input(
        BashInput, json.dumps({"command": "x", "sandboxPermissions": {"network": True}})
    )
    assert isinstance(ok, BashInput) and ok.sandbox_permissions is not None
    assert ok.sandbox_permissions.network and ok.sandbox_permissions.paths == []
    empty = parse_input(BashInput, json.dumps({"command": "x", "sandboxPermissions": {}}))
    assert isinstance(empty, str) and "needs paths, network, or both" in empty
    schema = input_schema(BashInput, escalation=True)
    network = schema["$defs"]["SandboxPermissionsInput"]["properties"]["network"]  # type: ignore[index,call-overload]
    assert network["description"] == NETWORK_GRANT_LINE  # type: ignore[index,call-overload]


async def test_grep_glob_and_list_refuse_or_skip_the_credential_tier(
    make_session: Callable[..., ToolSessionContext], home: Path
) -> None:
    """Issue 22 point 4: list of a credential dir is refused with the marker; grep and glob over
    the home never enter or list a credential path, a file as much as a directory, hidden or
    not."""
    (home / "vault").mkdir()
    (home / "vault" / "key.txt").write_text("npm_secret\n")
    (home / "token.txt").write_text("npm_secret\n")
    (home / "notes.txt").write_text("nothing\n")
    session = make_session(credential_paths=(home / "vault", home / "token.txt"))
    toolset = builtin_registry().finalize(ToolsetConfig(BUILTIN_TOOL_IDS), session)
    listed = await toolset.call("list", json.dumps({"path": str(home / "vault")}), call_ctx())
    assert "holds credentials; reading it needs the user's approval" in listed.text
    grep = json.dumps({"pattern": "npm_secret", "path": str(home)})
    assert "No matches" in (await toolset.call("grep", grep, call_ctx("g"))).text
    glob = json.dumps({"pattern": "**/*.txt", "path": str(home)})
    found = (await toolset.call("glob", glob, call_ctx("h"))).text
    assert "notes.txt" in found and "key.txt" not in found and "token.txt" not in found


async def test_a_fifo_or_a_device_in_the_workspace_is_refused_by_the_file_tools_not_waited_on(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """A workspace is untrusted: a FIFO blocks an ordinary ``open`` until a writer comes, in the
    worker thread of the tool (the turn hung, and the daemon's stop waited on that thread). read,
    write and edit refuse a FIFO and a symlink to a device as not a regular file; grep skips
    them; a FIFO named ``.gitignore`` is no ignore file for grep and glob. Bounded: each call
    must answer within 10 s (on the old code the FIFO's readers are released in ``finally``)."""
    fifos = (workspace / "pipe", workspace / "sub" / ".gitignore")
    (workspace / "sub").mkdir()
    for fifo in fifos:
        os.mkfifo(fifo)
    (workspace / "zero").symlink_to("/dev/zero")
    (workspace / "sub" / "a.txt").write_text("needle\n")
    try:
        for name, arguments in (
            ("read", {"path": "pipe"}),
            ("write", {"path": "pipe", "content": "x"}),
            ("edit", {"filePath": "pipe", "oldString": "a", "newString": "b"}),
            ("read", {"path": "zero"}),  # /dev/zero: outside, so only readable
        ):
            async with asyncio.timeout(10):
                result = await toolset.call(name, json.dumps(arguments), call_ctx())
            assert result.status is ToolStatus.FAILED, (name, arguments, result.text)
            assert NOT_REGULAR in result.text, (name, arguments, result.text)
        async with asyncio.timeout(10):
            grep = await toolset.call("grep", json.dumps({"pattern": "needle"}), call_ctx("g"))
            glob = await toolset.call("glob", json.dumps({"pattern": "**/*"}), call_ctx("h"))
            piped = await toolset.call(
                "grep", json.dumps({"pattern": "x", "path": "pipe"}), call_ctx("i")
            )
        assert "sub/a.txt" in grep.text and "sub/a.txt" in glob.text
        assert piped.status is ToolStatus.SUCCEEDED and "No matches" in piped.text
    finally:
        for fifo in fifos:  # a reader still blocked in open() (the old code) is let go
            os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))


async def test_a_hostile_gitignore_or_glob_neither_hangs_nor_breaks_glob_and_grep(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """The workspace and the model are untrusted (tools.md §7 grep/glob): a ``.gitignore``
    line ``*a*a…*b`` against a long name made Python's ``re`` backtrack for years, holding the
    GIL (glob, grep and the daemon with them never answered), and a line that is no pattern
    (``[b-a]``) made every glob and grep of the workspace fail. Now such a line is matched in
    linear time, an invalid one is skipped as git skips it, and a glob that is no pattern is
    the model's invalid input."""
    (workspace / ".gitignore").write_text("*a" * 20 + "*b\n[b-a]\n*.log\n")
    (workspace / ("a" * 100)).write_text("needle\n")
    (workspace / "x.log").write_text("needle\n")
    found = await toolset.call("glob", json.dumps({"pattern": "*a" * 20 + "*b"}), call_ctx())
    assert found.status is ToolStatus.SUCCEEDED and found.text.startswith("No files"), found.text
    listed = await toolset.call("glob", '{"pattern": "**/*"}', call_ctx())
    assert listed.text == "a" * 100, listed.text
    grepped = await toolset.call("grep", '{"pattern": "needle", "glob": "*"}', call_ctx())
    assert grepped.text.splitlines()[0] == "a" * 100, grepped.text
    for tool, field in (("glob", "pattern"), ("grep", "glob")):
        bad = await toolset.call(tool, json.dumps({"pattern": "x", field: "[b-a]"}), call_ctx())
        assert bad.error is not None and bad.error.code is ToolErrorCode.INVALID_ARGUMENTS
        assert bad.text.startswith(f"invalid tool input: {field}: not a valid glob"), bad.text
