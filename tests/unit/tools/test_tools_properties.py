"""Property tests: the fence never lets a write out; the cut always bounds (tools.md §6, §8)."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openwork_tools.context import ToolSessionContext
from openwork_tools.modes import SandboxMode, SandboxStatus
from openwork_tools.paths import CheckedPath, PathIntent, resolve_path
from openwork_tools.policy import Access, SandboxPolicy
from openwork_tools.results import RESULT_TEXT_LIMIT
from openwork_tools.spill import fallback_cut

COMPONENTS = ["..", ".", "a", "b", "out", "in", "dangling", "key", ".git", "hooks", "new.txt"]


def _tree(root: Path) -> ToolSessionContext:
    home = root / "home"
    ws = home / "ws"
    (ws / "a" / "b").mkdir(parents=True, exist_ok=True)
    (home / ".ssh").mkdir(exist_ok=True)
    (root / "elsewhere").mkdir(exist_ok=True)
    for name, target in [
        ("out", root / "elsewhere"),
        ("in", ws / "a"),
        ("dangling", root / "elsewhere" / "nothing"),
        ("key", home / ".ssh"),
    ]:
        link = ws / "a" / name
        if not os.path.lexists(link):
            link.symlink_to(target)
        if not os.path.lexists(ws / name):
            (ws / name).symlink_to(target)
    return ToolSessionContext(
        working_directory=ws,
        sandbox=SandboxStatus(True),
        home=home,
        temp_dirs=(),
        protected_roots=(home / ".openwork",),
    )


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parts=st.lists(st.sampled_from(COMPONENTS), min_size=1, max_size=7),
    absolute=st.booleans(),
    mode=st.sampled_from(list(SandboxMode)),
)
def test_an_allowed_write_always_lands_inside_the_workspace_and_outside_git_hooks(
    tmp_path: Path, parts: list[str], absolute: bool, mode: SandboxMode
) -> None:
    """tools.md §6: whatever mix of `..`, `.`, symlinks and absolute prefixes, a write that
    passes the fence resolves inside the workspace (no temp dirs, no grants here)."""
    session = _tree(tmp_path)
    given_path = "/".join(parts)
    if absolute:
        given_path = str(session.working_directory) + "/" + given_path
    checked = resolve_path(
        given_path, Access.WRITE, PathIntent.MAY_CREATE, SandboxPolicy(mode), session
    )
    if isinstance(checked, CheckedPath):
        ws = session.working_directory
        assert checked.real == ws or ws in checked.real.parents
        rel = checked.real.relative_to(ws).parts
        assert not any(a == ".git" and b == "hooks" for a, b in itertools.pairwise(rel))
        probe = checked.real
        while not os.path.lexists(probe):
            probe = probe.parent
        assert Path(os.path.realpath(probe)) == probe


_SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)


@given(
    text=st.text(min_size=0, max_size=40_000)
    | st.text(alphabet="é\n", max_size=40_000)
    | st.text(alphabet=st.sampled_from("a\n") | _SURROGATES, max_size=40_000)
)
def test_the_fallback_cut_always_bounds_and_keeps_a_prefix(text: str) -> None:
    """tools.md §8: every result <= 32,000 bytes incl. footer; the head is the text's start —
    lone surrogates included (a file name that is not UTF-8, an MCP server's ``\ud83d``), each
    measured as three bytes."""
    cut = fallback_cut(text, None, "c")
    assert len(cut.encode(errors="surrogatepass")) <= RESULT_TEXT_LIMIT
    if len(text.encode(errors="surrogatepass")) <= RESULT_TEXT_LIMIT:
        assert cut == text
    else:
        head = cut[: cut.rindex("... (")].rstrip("\n")
        assert text.startswith(head)
        assert cut.endswith(" bytes omitted.)")
