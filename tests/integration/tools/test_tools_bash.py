"""bash in the bubblewrap sandbox (tools.md §5, §7 bash, §10; permissions-sandbox.md §1, §2, §6).

Real processes in real bwrap sandboxes. bubblewrap is a system dependency of the project
(scripts/install-system-deps.sh); these tests fail, not skip, when it is missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from pathlib import Path

import pytest

import openwork_tools.builtin.bash as bash_module
import openwork_tools.spill as spill_module
from openwork_tools.builtin.registry import builtin_registry
from openwork_tools.context import StdoutProgress, ToolCallContext, ToolProgress, ToolSessionContext
from openwork_tools.modes import SandboxMode, SandboxStatus
from openwork_tools.paths import PathIntent, resolve_path
from openwork_tools.policy import Access, GrantScope, PathGrant, SandboxPolicy
from openwork_tools.registry import FinalizedToolset, ToolsetConfig
from openwork_tools.results import ToolErrorCode, ToolResult, ToolStatus
from tests.support.tools import UNAVAILABLE, call_ctx

DURATION = r"duration \d+ ms"
ACCEPT = SandboxMode.ACCEPT_EDITS


def bash_toolset(session: ToolSessionContext) -> FinalizedToolset:
    return builtin_registry().finalize(ToolsetConfig(("read", "write", "bash")), session)


async def bash(
    toolset: FinalizedToolset,
    command: str,
    ctx: ToolCallContext | None = None,
    timeout_ms: int | None = None,
) -> ToolResult:
    payload: dict[str, object] = {"command": command}
    if timeout_ms is not None:
        payload["timeoutMs"] = timeout_ms
    return await toolset.call("bash", json.dumps(payload), ctx or call_ctx())


def denial_lines(mode: str) -> str:
    return (
        f"[sandbox: file access denied under {mode} mode]\n"
        "[sandbox: to proceed, retry this exact command once with sandboxPermissions listing "
        "only the paths it needs, and a one-sentence justification; the user will be asked. "
        "If the paths cannot be listed, ask the user to run the command instead]"
    )


async def test_auto_mode_writes_the_workspace(toolset: FinalizedToolset, workspace: Path) -> None:
    """permissions-sandbox.md §1: in auto bash may write the workspace; cwd = workspace root."""
    result = await bash(toolset, "pwd; echo made > made.txt")
    assert result.status is ToolStatus.SUCCEEDED and not result.sandbox_denied
    assert re.fullmatch(rf"{re.escape(str(workspace))}\n\[exit 0; {DURATION}\]", result.text)
    assert (workspace / "made.txt").read_text() == "made\n"


async def test_accept_edits_denies_workspace_writes_with_the_marker_naming_the_mode(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """permissions-sandbox.md §1, §6: kernel denial -> sandbox_denied + two marker lines."""
    result = await bash(toolset, "echo no > nope.txt", call_ctx(mode=ACCEPT))
    assert result.status is ToolStatus.SUCCEEDED and result.sandbox_denied
    assert re.fullmatch(
        r"\S*bash: line 1: nope.txt: Read-only file system\n"
        rf"\[exit 1; {DURATION}\]\n" + re.escape(denial_lines("accept-edits")),
        result.text,
    ), result.text
    assert not (workspace / "nope.txt").exists()


async def test_a_write_grant_opens_that_path_for_that_call_only(
    toolset: FinalizedToolset, session: ToolSessionContext, workspace: Path
) -> None:
    """permissions-sandbox.md §5, tools.md §10: bash runs under this call's policy."""
    grant = PathGrant(session.working_directory, Access.WRITE, GrantScope.SUBTREE)
    ctx = ToolCallContext(call_id="g", policy=SandboxPolicy(ACCEPT, (grant,)))
    assert not (await bash(toolset, "echo ok > granted.txt", ctx)).sandbox_denied
    assert (await bash(toolset, "echo no > again.txt", call_ctx(mode=ACCEPT))).sandbox_denied
    assert (workspace / "granted.txt").exists() and not (workspace / "again.txt").exists()


async def test_home_as_workspace_is_never_writable_by_bash(
    make_session: object, home: Path
) -> None:
    """permissions-sandbox.md §1: workspace == $HOME (or an ancestor) -> no bash writes."""
    session = make_session(working_directory=home)  # type: ignore[operator]
    result = await bash(bash_toolset(session), "echo x > in-home.txt")
    assert result.sandbox_denied and not (home / "in-home.txt").exists()


async def test_credential_dirs_are_invisible_and_temp_dirs_writable(
    toolset: FinalizedToolset, session: ToolSessionContext, home: Path
) -> None:
    """tools.md §10: credential dirs unreadable for bash; temp dirs writable in both modes."""
    temp = session.temp_dirs[0]
    for mode in SandboxMode:
        result = await bash(
            toolset,
            f"ls -A {home}/.ssh; cat {home}/.ssh/id_rsa; echo t > {temp}/t-{mode}",
            call_ctx(mode=mode),
        )
        assert "SECRET" not in result.text and "id_rsa\n" not in result.text
        assert (temp / f"t-{mode}").read_text() == "t\n"


async def test_outside_and_protected_paths_are_read_only(
    toolset: FinalizedToolset, workspace: Path, outside: Path, home: Path
) -> None:
    """permissions-sandbox.md §5: outside the workspace and `.git/hooks` stay read-only."""
    (workspace / ".git" / "hooks").mkdir(parents=True)
    result = await bash(
        toolset,
        f"cat {outside}/victim.txt; echo x > {outside}/victim.txt; echo x > .git/hooks/pre-commit;"
        f" echo x > {home}/.openwork/cfg",
    )
    assert result.text.startswith("untouched\n") and result.sandbox_denied
    assert (outside / "victim.txt").read_text() == "untouched\n"
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (home / ".openwork" / "cfg").exists()


async def test_non_zero_exit_is_success_and_stdin_is_dev_null(toolset: FinalizedToolset) -> None:
    """tools.md §7 bash, §10: non-zero exit -> succeeded; stdin is /dev/null (cat returns)."""
    result = await bash(toolset, "cat; echo err >&2; exit 7")
    assert result.status is ToolStatus.SUCCEEDED and not result.sandbox_denied
    assert re.fullmatch(rf"err\n\[exit 7; {DURATION}\]", result.text)


async def test_environment_holds_only_the_six_host_variables_and_gocache(
    make_session: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tools.md §4, §7 bash: env = PATH HOME SHELL LANG LC_ALL TMPDIR + GOCACHE."""
    monkeypatch.setenv("OPENWORK_LEAK_CHECK", "leaked")
    session = make_session(environment=None)  # type: ignore[operator]
    result = await bash(bash_toolset(session), "env")
    names = {line.split("=", 1)[0] for line in result.text.splitlines() if "=" in line}
    assert "OPENWORK_LEAK_CHECK" not in names
    assert names <= {
        "PATH",
        "HOME",
        "SHELL",
        "LANG",
        "LC_ALL",
        "TMPDIR",
        "GOCACHE",
        "PWD",
        "SHLVL",
        "_",
        "OLDPWD",
    }
    assert "GOCACHE" in names


async def test_timeout_kills_the_group_and_keeps_partial_output(
    toolset: FinalizedToolset,
) -> None:
    """tools.md §7 bash: timeout -> failed `timeout` with partial output and the status line."""
    result = await bash(toolset, "echo started; sleep 60 & wait", timeout_ms=300)
    assert result.status is ToolStatus.FAILED
    assert result.error is not None and result.error.code is ToolErrorCode.TIMEOUT
    assert re.fullmatch(rf"started\n\[timed out after 300 ms; {DURATION}\]", result.text)


async def test_timeout_is_bounded_by_the_call_deadline_and_clamped(
    toolset: FinalizedToolset,
) -> None:
    """tools.md §5: bash timeout = min(timeoutMs clamped to 1–120,000, deadline remaining)."""
    ctx = call_ctx(deadline=time.monotonic() + 0.25)
    result = await bash(toolset, "sleep 60", ctx, timeout_ms=10_000_000)
    match = re.fullmatch(rf"\[timed out after (\d+) ms; {DURATION}\]", result.text)
    assert match is not None and int(match[1]) <= 250
    clamped = await bash(toolset, "sleep 60", timeout_ms=0)
    assert clamped.text.startswith("[timed out after 1 ms;")


async def test_cancel_stops_the_running_call_with_partial_output(
    toolset: FinalizedToolset,
) -> None:
    """tools.md §5, §10: cancel -> `cancelled` with partial output; progress arrives first."""
    cancel = asyncio.Event()
    seen: list[ToolProgress] = []

    def on_progress(item: ToolProgress) -> None:
        seen.append(item)
        if isinstance(item, StdoutProgress) and "ready" in item.chunk:
            cancel.set()

    ctx = ToolCallContext(call_id="c", policy=SandboxPolicy(), cancel=cancel, progress=on_progress)
    result = await asyncio.wait_for(bash(toolset, "echo ready; sleep 60", ctx), 30)
    assert result.status is ToolStatus.CANCELLED
    assert result.error is not None and result.error.code is ToolErrorCode.CANCELLED
    assert re.fullmatch(rf"ready\n\[cancelled; {DURATION}\]", result.text)
    assert seen[0] == StdoutProgress("ready\n")


async def test_failing_progress_sink_is_harmless(toolset: FinalizedToolset) -> None:
    """tools.md §8: progress is try-send; failures never affect the result."""

    def broken(item: ToolProgress) -> None:
        raise RuntimeError("closed")

    result = await bash(toolset, "echo fine", call_ctx(progress=broken))
    assert result.status is ToolStatus.SUCCEEDED and result.text.startswith("fine\n")


async def test_kill_failure_is_outcome_unknown(
    toolset: FinalizedToolset, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tools.md §5, §10: a kill failure other than ESRCH -> `outcome_unknown`."""
    real_killpg = os.killpg

    def killpg_then_fail(pgid: int, sig: int) -> None:
        real_killpg(pgid, sig)
        raise PermissionError("not allowed")

    monkeypatch.setattr(bash_module.os, "killpg", killpg_then_fail)
    result = await bash(toolset, "sleep 60", timeout_ms=100)
    assert result.status is ToolStatus.OUTCOME_UNKNOWN
    assert result.error is not None and result.error.code is ToolErrorCode.OUTCOME_UNKNOWN


async def test_large_output_keeps_head_and_tail_and_spills_the_rest(
    toolset: FinalizedToolset, session: ToolSessionContext
) -> None:
    """tools.md §7 bash, §10: first 2 KiB + last 14 KiB; middle replaced by the spill note."""
    result = await bash(toolset, "seq 1 30000")
    full = "".join(f"{i}\n" for i in range(1, 30001)).encode()
    assert session.spill_dir is not None
    spilled = session.spill_dir / "call_1.txt"
    assert spilled.read_bytes() == full
    omitted = len(full) - 2048 - 14336
    note = (
        f"... ({omitted} bytes omitted. Full output saved at {spilled} — "
        "use read with offset/limit, or grep, to look at it.)"
    )
    expected = full[:2048].decode() + "\n" + note + "\n" + full[-14336:].decode()
    assert result.text.startswith(expected)
    assert re.fullmatch(rf"\[exit 0; {DURATION}\]", result.text[len(expected) :])


async def test_spilled_output_is_readable_but_not_writable(
    toolset: FinalizedToolset, session: ToolSessionContext
) -> None:
    """tools.md §8, §10: the model may read the spill file, never write it (file tools or bash)."""
    await bash(toolset, "seq 1 30000")
    assert session.spill_dir is not None
    spilled = session.spill_dir / "call_1.txt"
    read = await toolset.call("read", f'{{"path": "{spilled}", "offset": 29999}}', call_ctx())
    assert read.text == "29999\t29999\n30000\t30000"
    write = await toolset.call("write", f'{{"path": "{spilled}", "content": "x"}}', call_ctx())
    assert write.status is ToolStatus.DENIED
    overwrite = await bash(toolset, f"echo x > {spilled}", call_ctx("call_2"))
    assert overwrite.sandbox_denied
    assert spilled.read_bytes().startswith(b"1\n2\n")


async def test_failed_run_deletes_its_partial_spill(
    toolset: FinalizedToolset, session: ToolSessionContext
) -> None:
    """tools.md §8: failed bash runs delete partial spill; the note then names no path."""
    result = await bash(toolset, "seq 1 30000; sleep 60", timeout_ms=3000)
    assert result.status is ToolStatus.FAILED
    assert session.spill_dir is not None and not (session.spill_dir / "call_1.txt").exists()
    assert re.search(r"\n\.\.\. \(\d+ bytes omitted\.\)\n", result.text)


async def test_unavailable_sandbox_runs_nothing(make_session: object, workspace: Path) -> None:
    """permissions-sandbox.md §2: bash never runs; fixed `sandbox_unavailable` text."""
    session = make_session(sandbox=UNAVAILABLE)  # type: ignore[operator]
    result = await bash(bash_toolset(session), "touch ran.txt")
    assert result.error is not None and result.error.code is ToolErrorCode.SANDBOX_UNAVAILABLE
    assert result.text == (
        "[sandbox: unavailable, so bash cannot run commands in this session (bwrap is not "
        "installed). File tools still work; ask the user to run the command in their own "
        "terminal if it is needed.]"
    )
    assert not (workspace / "ran.txt").exists()


async def test_wrapper_failure_is_unavailable_and_spawn_failure_is_execution_failed(
    make_session: object, tmp_path: Path
) -> None:
    """tools.md §7 bash, §10: sandbox wrapper failure -> `sandbox_unavailable`; spawn -> error."""
    fake = tmp_path / "fake-bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: Creating new namespace failed: nope' >&2\nexit 1\n")
    fake.chmod(0o755)
    broken = make_session(bwrap_path=str(fake))  # type: ignore[operator]
    result = await bash(bash_toolset(broken), "true")
    assert result.error is not None and result.error.code is ToolErrorCode.SANDBOX_UNAVAILABLE
    assert "(bwrap: Creating new namespace failed: nope)" in result.text
    missing = make_session(bwrap_path=str(tmp_path / "no-such-bwrap"))  # type: ignore[operator]
    spawn = await bash(bash_toolset(missing), "true")
    assert spawn.error is not None and spawn.error.code is ToolErrorCode.EXECUTION_FAILED


def test_prepare_reports_command_danger_and_escalation_only_when_available(
    make_session: object,
) -> None:
    """tools.md §6: bash -> command and (sandbox available only) danger + escalation."""
    payload = (
        '{"command": "rm -rf build", "justification": "clean",'
        ' "sandboxPermissions": {"paths": [{"path": "/srv", "access": "write", "scope": "exact"}]}}'
    )
    available = bash_toolset(make_session()).prepare("bash", payload)  # type: ignore[operator]
    assert available is not None and available.command == "rm -rf build"
    assert available.danger is not None and available.danger.key == "rm_recursive_or_force"
    assert available.escalation is not None
    off = bash_toolset(make_session(sandbox=UNAVAILABLE)).prepare("bash", payload)  # type: ignore[operator]
    assert off is not None and off.danger is None and off.escalation is None
    assert off.command == "rm -rf build"


def test_sandbox_status_is_a_value() -> None:
    assert SandboxStatus(False, "x") == SandboxStatus(available=False, reason="x")


def _alive_with(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("timeout_ms", [1, 5, 50, 300])
async def test_timeout_leaves_no_sandboxed_process_behind(
    toolset: FinalizedToolset, timeout_ms: int
) -> None:
    """tools.md §5: terminate kills the whole group — background children included — even when
    it lands while bwrap is still setting the sandbox up."""
    marker = f"openwork-orphan-check-{timeout_ms}"
    result = await bash(
        toolset, f"(exec -a {marker} sleep 60) & exec -a {marker} sleep 60", timeout_ms=timeout_ms
    )
    assert result.status is ToolStatus.FAILED, result.text
    assert await asyncio.to_thread(_alive_with, marker + "\0") == []


async def test_a_sandbox_not_up_within_the_timeout_is_a_timeout_even_if_its_process_ended(
    make_session: object, tmp_path: Path
) -> None:
    """tools.md §5, §7 bash: the whole timeout went on the sandbox's setup, so the call is a
    timeout and the command never runs — not the exit status of a tree that died before the
    command (CI, 2026-12-05: a 5 ms timeout reported ``[exit 141]``, succeeded: the prelude's
    SIGPIPE on the closed started pipe). This stand-in for bwrap keeps the started pipe open in
    a background child, never says the sandbox is up, and exits 0 at once."""
    marker = tmp_path / "ran"
    fake = tmp_path / "slow-bwrap"
    fake.write_text("#!/bin/sh\n(sleep 30 >/dev/null 2>&1 &)\nexit 0\n")
    fake.chmod(0o755)
    slow = make_session(bwrap_path=str(fake))  # type: ignore[operator]
    result = await bash(bash_toolset(slow), f"touch {marker}", timeout_ms=300)
    assert result.error is not None and result.error.code is ToolErrorCode.TIMEOUT, result.text
    assert result.text.startswith("[timed out after 300 ms; duration "), result.text
    assert not marker.exists()


@pytest.mark.parametrize(
    ("where", "expected_writable"),
    [
        ("temp", True),
        ("outside", False),
        ("credential", False),
        ("openwork-home", False),
        ("git-hooks", False),
        ("granted-outside", True),
        ("granted-protected", False),
    ],
)
@pytest.mark.parametrize("mode", list(SandboxMode))
async def test_fence_and_sandbox_agree(
    toolset: FinalizedToolset,
    session: ToolSessionContext,
    workspace: Path,
    home: Path,
    outside: Path,
    where: str,
    expected_writable: bool,
    mode: SandboxMode,
) -> None:
    """tools.md §10: the file-tool fence and the bash sandbox give the same verdict for the
    same call policy (outside the workspace, where only the mode's bash rule differs)."""
    (workspace / ".git" / "hooks").mkdir(parents=True)
    targets = {
        "temp": session.temp_dirs[0] / f"agree-{mode}",
        "outside": outside / "agree",
        "credential": home / ".ssh" / "agree",
        "openwork-home": home / ".openwork" / "agree",
        "git-hooks": workspace / ".git" / "hooks" / "agree",
        "granted-outside": outside / "granted",
        "granted-protected": home / ".openwork" / "granted",
    }
    target = targets[where]
    real_tmp = session.working_directory.parent.parent
    granted = {
        "granted-outside": real_tmp / "outside",
        "granted-protected": real_tmp / "home" / ".openwork",
    }
    grants = (
        (PathGrant(granted[where], Access.WRITE, GrantScope.SUBTREE),) if where in granted else ()
    )
    policy = SandboxPolicy(mode, grants)
    fence = resolve_path(str(target), Access.WRITE, PathIntent.MAY_CREATE, policy, session)
    fence_allows = not isinstance(fence, ToolResult)
    ctx = ToolCallContext(call_id="agree", policy=policy)
    result = await bash(toolset, f"echo x > {target}", ctx)
    bash_wrote = target.exists()
    assert fence_allows == bash_wrote == expected_writable, (fence, result.text)


async def test_spill_file_is_capped_and_says_so(
    toolset: FinalizedToolset, session: ToolSessionContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tools.md §8, §10: unbounded output is bounded on disk too (64 MiB cap, here lowered)."""
    monkeypatch.setattr(spill_module, "SPILL_FILE_LIMIT", 100_000)
    result = await bash(toolset, "seq 1 200000")
    assert session.spill_dir is not None
    spilled = session.spill_dir / "call_1.txt"
    assert spilled.stat().st_size == 100_000
    assert f"bytes omitted. Only the first 64 MB were saved at {spilled} — " in result.text


async def test_cancelling_the_awaiting_task_kills_the_sandbox_and_re_raises(
    toolset: FinalizedToolset, session: ToolSessionContext
) -> None:
    """DESIGN.md §4.6: cancellation is re-raised after cleanup; no process, no partial spill."""
    started = asyncio.Event()
    marker = "openwork-outer-cancel-check"

    def on_progress(item: ToolProgress) -> None:
        if isinstance(item, StdoutProgress) and "ready" in item.chunk:
            started.set()

    ctx = call_ctx(progress=on_progress)
    command = f"seq 1 30000; echo ready; exec -a {marker} sleep 60"
    task = asyncio.create_task(bash(toolset, command, ctx))
    await asyncio.wait_for(started.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(_alive_with, marker + "\0") == []
    assert session.spill_dir is not None and not (session.spill_dir / "call_1.txt").exists()
