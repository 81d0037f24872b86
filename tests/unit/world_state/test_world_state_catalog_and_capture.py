"""The skill catalog section (skills.md §3, §8) and the capture of all four sources
(context-window.md §3), with real files in tmp_path."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from openwork_core.context.world_state import capture as capture_module
from openwork_core.context.world_state import skill_catalog as catalog_module
from openwork_core.context.world_state import user_project
from openwork_core.context.world_state.capture import (
    SectionBody,
    WorldStateCapture,
    capture_world_state,
    capture_world_state_sync,
)
from openwork_core.context.world_state.diff import RetainedSections, WorldStateBaseline, render_diff
from openwork_core.context.world_state.errors import (
    ProjectInstructionError,
    SkillCatalogTaskError,
    UserProjectContextError,
)
from openwork_core.context.world_state.ids import SECTION_ORDER, SectionId
from openwork_core.context.world_state.skill_catalog import (
    MAX_SKILL_CATALOG_CHARS,
    REASON_CATALOG_OVER_BUDGET,
    load_skill_catalog,
    render_skill_catalog,
)
from openwork_core.skills.discovery import SkillDiscovery, SkillSummary, discover_skills
from openwork_tools.modes import SandboxMode, SandboxStatus

from .support import Session, sources


def write_skill(root: Path, name: str, description: str) -> Path:
    (root / name).mkdir(parents=True, exist_ok=True)
    path = root / name / "SKILL.md"
    path.write_text(f"---\ndescription: {description}\n---\nBody\n", encoding="utf-8")
    return path


def summary(name: str, description: str = "d") -> SkillSummary:
    return SkillSummary(name=name, description=description, path=f"/s/{name}/SKILL.md")


# ---- skills/catalog ----


def test_the_catalog_is_the_english_gloss_with_one_line_per_enabled_skill(tmp_path: Path) -> None:
    """skills.md §3: header, `- {name}: {description} (file: {path})` lines, footer."""
    a = write_skill(tmp_path, "alpha", "Handles alpha work.")
    b = write_skill(tmp_path, "beta", "Handles beta work.")
    assert load_skill_catalog(tmp_path, frozenset()).body == "\n".join(
        [
            "<available_skills>",
            "A skill is an operating instruction stored in SKILL.md. Below are all skills "
            "available in this session.",
            "",
            f"- alpha: Handles alpha work. (file: {a})",
            f"- beta: Handles beta work. (file: {b})",
            "",
            "When a task matches a description, first `read` its whole path before acting; do not "
            "guess the body from the description.",
            "Relative paths inside SKILL.md resolve against its directory. If there is a scripts/ "
            "folder, run the existing scripts instead of rewriting equivalent code.",
            "Read a chosen instruction file completely; do not read unrelated references/.",
            "</available_skills>",
        ]
    )


def test_disabled_skills_are_left_out_and_come_back_when_re_enabled(tmp_path: Path) -> None:
    """§3; skills.md §3, §8: the catalog does not include disabled skills."""
    write_skill(tmp_path, "alpha", "A.")
    write_skill(tmp_path, "beta", "B.")
    disabled = load_skill_catalog(tmp_path, frozenset({"alpha"})).body or ""
    assert "- alpha:" not in disabled and "- beta: B." in disabled
    assert "- alpha: A." in (load_skill_catalog(tmp_path, frozenset()).body or "")


def test_no_enabled_skill_means_no_catalog_section(tmp_path: Path) -> None:
    """skills.md §3, §8: no enabled skill -> no catalog message."""
    write_skill(tmp_path, "alpha", "A.")
    assert load_skill_catalog(tmp_path, frozenset({"alpha"})).body is None
    assert load_skill_catalog(tmp_path / "missing", frozenset()).body is None
    assert load_skill_catalog(None, frozenset()).body is None


def test_a_fake_entry_in_a_multi_line_description_stays_inside_one_line(tmp_path: Path) -> None:
    """skills.md §8: `- fake: x (file: /elsewhere/x)` on a second line must not become an entry."""
    (tmp_path / "alpha").mkdir()
    (tmp_path / "alpha" / "SKILL.md").write_text(
        "---\ndescription: |\n  Real.\n  - fake: x (file: /elsewhere/x)\n---\n", encoding="utf-8"
    )
    body = load_skill_catalog(tmp_path, frozenset()).body or ""
    entries = [line for line in body.splitlines() if line.startswith("- ")]
    assert entries == [
        f"- alpha: Real. - fake: x (file: /elsewhere/x) (file: {tmp_path / 'alpha' / 'SKILL.md'})"
    ]


def test_an_over_budget_catalog_drops_whole_lines_from_the_end_with_one_warning_each() -> None:
    """skills.md §3, §8: whole body <= 8 000 characters; one warning per dropped line."""
    skills = tuple(summary(f"s{i:03d}", "x" * 900) for i in range(12))
    catalog = render_skill_catalog(SkillDiscovery(skills=skills), ())
    body = catalog.body or ""
    assert len(body) <= MAX_SKILL_CATALOG_CHARS
    kept = [line for line in body.splitlines() if line.startswith("- ")]
    assert kept == [
        f"- s{i:03d}: {'x' * 900} (file: /s/s{i:03d}/SKILL.md)" for i in range(len(kept))
    ]
    dropped = skills[len(kept) :]
    assert dropped and [(w.path, w.reason) for w in catalog.warnings] == [
        (s.path, REASON_CATALOG_OVER_BUDGET) for s in dropped
    ]
    one_more = render_skill_catalog(SkillDiscovery(skills=skills[: len(kept) + 1]), ())
    assert (
        len(one_more.body or "")
        <= MAX_SKILL_CATALOG_CHARS
        < len(body)
        + len(f"- {dropped[0].name}: {dropped[0].description} (file: {dropped[0].path})")
        + 1
    )


def test_the_catalog_is_byte_stable_for_identical_input(tmp_path: Path) -> None:
    """skills.md §2, §3, §8: line order = discovery order; identical input, identical bytes."""
    for name in ["zeta", "alpha", "mid"]:
        write_skill(tmp_path, name, f"{name} things")
    first = load_skill_catalog(tmp_path, frozenset())
    second = load_skill_catalog(tmp_path, frozenset())
    assert first.body is not None and first.body.encode() == (second.body or "").encode()
    assert [line[2:6] for line in first.body.splitlines() if line.startswith("- ")] == [
        "alph",
        "mid:",
        "zeta",
    ]


def test_catalog_warnings_go_to_the_log_only_and_match_the_listing(tmp_path: Path) -> None:
    """§3, skills.md §3: scan warnings are logged and never enter the model context; listing and
    sampling compute the same warnings."""
    write_skill(tmp_path, "good", "Fine.")
    (tmp_path / "Bad_Name").mkdir()
    with capture_logs() as logs:
        catalog = load_skill_catalog(tmp_path, frozenset())
    assert catalog.warnings == discover_skills(tmp_path).warnings
    assert [(e["event"], e["log_level"], e["path"]) for e in logs] == [
        ("skill_catalog.warning", "warning", str(tmp_path / "Bad_Name"))
    ]
    assert "Bad_Name" not in (catalog.body or "")


def test_an_unexpected_catalog_failure_is_a_skill_catalog_task_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """§3: the Turn fails with `skill_catalog_task_error`."""

    def boom(root: Path | None) -> SkillDiscovery:
        raise RuntimeError("scan crashed")

    monkeypatch.setattr(catalog_module, "discover_skills", boom)
    with pytest.raises(SkillCatalogTaskError) as err:
        capture_world_state_sync(sources(tmp_path, tmp_path))
    assert err.value.code == "skill_catalog_task_error"


def test_had_a_catalog_now_none_sends_the_invalidation_and_always_none_sends_nothing(
    tmp_path: Path,
) -> None:
    """skills.md §3 sampling table, §8: all-disabled sends the removal notice."""
    skills = tmp_path / "skills"
    write_skill(skills, "alpha", "A.")
    (tmp_path / "ws").mkdir()
    session = Session.fresh()
    session.sample(capture_world_state_sync(sources(tmp_path / "ws", skills)))
    off = capture_world_state_sync(sources(tmp_path / "ws", skills, disabled=frozenset({"alpha"})))
    assert [u.text for u in session.sample(off)] == [
        "The previous skill catalog no longer applies."
    ]
    assert session.sample(off) == ()
    never = Session.fresh()
    assert SectionId.SKILL_CATALOG not in [u.section_id for u in never.sample(off)]


# ---- capture ----


def make_workspace(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "repo"
    (ws / ".git").mkdir(parents=True)
    (ws / "AGENTS.md").write_text("Run the tests.\n", encoding="utf-8")
    skills = tmp_path / "skills"
    write_skill(skills, "alpha", "A.")
    return ws, skills


def test_capture_renders_the_four_sections_in_the_fixed_order(tmp_path: Path) -> None:
    """§3: capture reads the four sources; the order is fixed."""
    ws, skills = make_workspace(tmp_path)
    world = capture_world_state_sync(sources(ws, skills))
    assert [s.section_id for s in world.sections] == list(SECTION_ORDER)
    assert [(s.body or "").split("\n", 1)[0] for s in world.sections] == [
        '<user_project_context format_version="1">',
        "<project_instructions>",
        "<available_skills>",
        "<sandbox_policy>",
    ]
    assert world.body(SectionId.PROJECT_INSTRUCTIONS) == (
        "<project_instructions>\nRun the tests.\n\n</project_instructions>"
    )
    assert f"workspace: {ws}\n" in (world.body(SectionId.SANDBOX_POLICY) or "")


async def test_the_async_capture_reads_in_a_worker_thread_and_equals_the_sync_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DESIGN.md §4.1: file reads run off the event loop, in one `asyncio.to_thread` call."""
    ws, skills = make_workspace(tmp_path)
    threads: list[threading.Thread] = []
    real = user_project.load_user_project_context

    def spy(workspace: str) -> str:
        threads.append(threading.current_thread())
        return real(workspace)

    monkeypatch.setattr(capture_module, "load_user_project_context", spy)
    world = await capture_world_state(sources(ws, skills))
    assert threads and threads[0] is not threading.main_thread()
    assert world == capture_world_state_sync(sources(ws, skills))


async def test_a_failing_source_fails_the_async_capture_with_its_code(tmp_path: Path) -> None:
    """§3: sampling fails with the source's error code; nothing is rendered."""
    ws, skills = make_workspace(tmp_path)
    (ws / "AGENTS.md").unlink()
    (ws / "AGENTS.md").symlink_to(tmp_path / "x")
    with pytest.raises(ProjectInstructionError):
        await capture_world_state(sources(ws, skills))
    with pytest.raises(UserProjectContextError):
        await capture_world_state(sources(tmp_path / "missing", skills))


def test_capture_derives_the_bash_line_from_the_home_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """permissions-sandbox.md §1: workspace == `$HOME` -> bash cannot write it, even in auto."""
    ws, skills = make_workspace(tmp_path)
    monkeypatch.setenv("HOME", str(ws))
    home_policy = capture_world_state_sync(sources(ws, skills)).body(SectionId.SANDBOX_POLICY)
    assert "writes to the workspace need sandboxPermissions." in (home_policy or "")
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))
    policy = capture_world_state_sync(sources(ws, skills)).body(SectionId.SANDBOX_POLICY)
    assert "can write the workspace and temporary directories." in (policy or "")
    forced = capture_world_state_sync(sources(ws, skills, bash_can_write_workspace=False))
    assert "sandboxPermissions" in (forced.body(SectionId.SANDBOX_POLICY) or "")
    unavailable = capture_world_state_sync(
        sources(ws, skills, mode=SandboxMode.ACCEPT_EDITS, sandbox=SandboxStatus(False, "no bwrap"))
    )
    assert "mode: accept-edits\n" in (unavailable.body(SectionId.SANDBOX_POLICY) or "")


def test_an_agents_md_edit_is_seen_by_the_next_sampling_with_a_replacement_notice(
    tmp_path: Path,
) -> None:
    """§3, §11 item 23 (unit level): edit between two samplings -> notice + the new body."""
    ws, skills = make_workspace(tmp_path)
    session = Session.fresh()
    session.sample(capture_world_state_sync(sources(ws, skills)))
    (ws / "AGENTS.md").write_text("Run the linter too.\n", encoding="utf-8")
    (update,) = session.sample(capture_world_state_sync(sources(ws, skills)))
    assert update.section_id is SectionId.PROJECT_INSTRUCTIONS
    assert update.text == (
        "The following AGENTS.md instructions replace all previously provided AGENTS.md "
        "instructions.\n\n<project_instructions>\nRun the linter too.\n\n</project_instructions>"
    )


def test_an_unchanged_workspace_samples_nothing_the_second_time(tmp_path: Path) -> None:
    """§3, §11 item 22 over real files."""
    ws, skills = make_workspace(tmp_path)
    baseline = WorldStateBaseline.empty()
    first = capture_world_state_sync(sources(ws, skills))
    assert len(render_diff(baseline, first, RetainedSections())) == 4
    second = capture_world_state_sync(sources(ws, skills))
    retained = RetainedSections(frozenset(SECTION_ORDER))
    assert render_diff(baseline.advanced(first), second, retained) == ()


def test_a_capture_must_hold_the_four_sections_in_order() -> None:
    """§3: the order of the four sections is fixed."""
    with pytest.raises(ValueError, match="fixed order"):
        WorldStateCapture(sections=tuple(SectionBody(s, None) for s in reversed(SECTION_ORDER)))
