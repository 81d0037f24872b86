"""Sandbox self-check and danger detection (permissions-sandbox.md §2, §5; DESIGN.md §2)."""

from __future__ import annotations

from pathlib import Path

import pytest

import openwork_tools.sandbox.probe as probe_module
from openwork_tools.prepared import DangerMatch
from openwork_tools.sandbox.danger import detect_danger
from openwork_tools.sandbox.probe import probe_sandbox, run_self_check


async def test_self_check_passes_with_real_bubblewrap() -> None:
    """DESIGN.md §2: available when bwrap runs and a write that must be denied is denied."""
    status = await run_self_check("/usr/bin/bwrap")
    assert (status.available, status.reason) == (True, None)


async def test_missing_bwrap_is_unavailable_with_a_reason(tmp_path: Path) -> None:
    """permissions-sandbox.md §2: unavailable carries the reason shown to the model."""
    status = await run_self_check(str(tmp_path / "bwrap"))
    assert (status.available, status.reason) == (False, "bubblewrap (bwrap) is not installed")
    assert not (await run_self_check(None)).available


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        ("#!/bin/sh\nexit 0\n", "bwrap failed its self-check: exit 0"),
        (
            "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n",
            "bwrap failed its self-check: bwrap: No permissions to create new namespace",
        ),
        # a "wrapper" that runs the command unsandboxed: the forbidden write succeeds
        (
            '#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n',
            "bwrap failed its self-check: a forbidden write succeeded",
        ),
    ],
    ids=["does-nothing", "cannot-create-namespace", "no-isolation"],
)
async def test_a_wrapper_that_does_not_really_deny_is_unavailable(
    tmp_path: Path, script: str, reason: str
) -> None:
    """permissions-sandbox.md §2: only a really denied write means available."""
    fake = tmp_path / "fake-bwrap"
    fake.write_text(script)
    fake.chmod(0o755)
    status = await run_self_check(str(fake))
    assert (status.available, status.reason) == (False, reason)


async def test_probe_verdict_is_cached_for_the_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """permissions-sandbox.md §2: the verdict is cached for the process lifetime."""
    monkeypatch.setattr(probe_module, "_verdict", None)
    first = await probe_sandbox("/usr/bin/bwrap")
    second = await probe_sandbox("/nonexistent/bwrap")
    assert first is second and first.available


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("rm -rf build", DangerMatch("rm_recursive_or_force", 0, 12)),
        ("ls && rm -f a.txt", DangerMatch("rm_recursive_or_force", 6, 17)),
        ("echo é; rm --recursive x", DangerMatch("rm_recursive_or_force", 8, 24)),
        ("find . -name '*.o' -delete", DangerMatch("find_delete", 0, 26)),
        ("git clean -fdx", DangerMatch("git_clean_force", 0, 14)),
        ("echo " + "$(" * 9 + "x" + ")" * 9, DangerMatch("nesting_too_deep", 0, 33)),
        ("sudo /bin/rm -r /opt/x; ls", DangerMatch("rm_recursive_or_force", 0, 22)),
        ("ls | xargs -0 rm -f", DangerMatch("rm_recursive_or_force", 5, 19)),
        ("find . -exec rm {} +", DangerMatch("find_delete", 0, 20)),
        ("git -C repo clean --force", DangerMatch("git_clean_force", 0, 25)),
        ("rm a.txt", None),
        ("git clean -n", None),
        ("echo rm -rf", None),
        ("npm run format", None),
    ],
)
def test_dangerous_commands_are_matched_with_utf16_offsets(
    command: str, expected: DangerMatch | None
) -> None:
    """permissions-sandbox.md §5 step 3: danger keys and UTF-16 offsets into the command."""
    assert detect_danger(command) == expected
