"""World State sampling with nothing changed, as a ratio to a bare read of the same sources.

Run: ``.venv/bin/python bench/world_state.py``. Builds a temp workspace (a git repository root with
~60 top-level entries, an AGENTS.md of a few KB, a skill root with 20 skills), then times, in the
same run:

* bare read: ``os.scandir`` of the root, reading AGENTS.md, listing the skill root and reading each
  SKILL.md (the physical floor of what a sampling must touch);
* sync sampling: ``capture_world_state_sync`` + ``render_diff`` against a baseline that already
  holds this world (the hot path of every model call; it must send nothing);
* async sampling: ``await capture_world_state`` (one ``asyncio.to_thread`` hop) + ``render_diff``.

Goal (DESIGN.md §6): sync ratio <= 1.5. Timings are best-of-N medians; never asserted in tests.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from openwork_core.context.world_state.capture import (
    WorldStateSources,
    capture_world_state,
    capture_world_state_sync,
)
from openwork_core.context.world_state.diff import RetainedSections, WorldStateBaseline, render_diff
from openwork_core.context.world_state.ids import SECTION_ORDER
from openwork_tools.modes import SandboxMode, SandboxStatus

ROUNDS = 7
PER_ROUND = 300


def build(base: Path) -> WorldStateSources:
    repo = base / "repo"
    (repo / ".git").mkdir(parents=True)
    for i in range(30):
        (repo / f"dir{i:02d}").mkdir()
    for i in range(29):
        (repo / f"file{i:02d}.py").write_text("print('x')\n", encoding="utf-8")
    paragraph = "- Run `make check` before you commit; keep modules under 400 lines.\n"
    (repo / "AGENTS.md").write_text("# Project rules\n\n" + paragraph * 60, encoding="utf-8")
    skills = base / "skills"
    for i in range(20):
        d = skills / f"skill-{i:02d}"
        (d / "scripts").mkdir(parents=True)
        (d / "SKILL.md").write_text(
            f"---\nname: skill-{i:02d}\ndescription: Does task number {i} in a careful and "
            "repeatable way, with scripts.\nallowed-tools: [bash, read]\n---\n\n"
            + "Step by step instructions.\n"
            * 40,
            encoding="utf-8",
        )
    return WorldStateSources(
        working_directory=repo,
        skill_root=skills,
        disabled_skill_names=frozenset({"skill-03"}),
        sandbox_mode=SandboxMode.AUTO,
        sandbox=SandboxStatus(available=True),
    )


def bare_read(sources: WorldStateSources) -> int:
    total = 0
    with os.scandir(sources.working_directory) as it:
        total += sum(1 for _ in it)
    with open(os.path.join(sources.working_directory, "AGENTS.md"), "rb") as f:
        total += len(f.read())
    assert sources.skill_root is not None
    with os.scandir(sources.skill_root) as it:
        dirs = [e.path for e in it]
    for d in dirs:
        with open(os.path.join(d, "SKILL.md"), "rb") as f:
            total += len(f.read())
    return total


def per_call(fn: Callable[[], object]) -> float:
    """Best round's mean seconds per call."""
    rounds = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(PER_ROUND):
            fn()
        rounds.append((time.perf_counter() - start) / PER_ROUND)
    return min(rounds)


async def per_call_async(
    sources: WorldStateSources, baseline: WorldStateBaseline, retained: RetainedSections
) -> float:
    rounds = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(PER_ROUND):
            render_diff(baseline, await capture_world_state(sources), retained)
        rounds.append((time.perf_counter() - start) / PER_ROUND)
    return min(rounds)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sources = build(Path(tmp))
        first = capture_world_state_sync(sources)
        baseline = WorldStateBaseline.empty().advanced(first)
        retained = RetainedSections(frozenset(SECTION_ORDER))

        def sample() -> None:
            updates = render_diff(baseline, capture_world_state_sync(sources), retained)
            assert updates == ()

        for _ in range(50):  # warm caches (page cache, parse memo)
            sample()
            bare_read(sources)
        bare_samples, sync_samples = [], []
        for _ in range(3):  # interleave so drift hits both sides alike
            bare_samples.append(per_call(lambda: bare_read(sources)))
            sync_samples.append(per_call(sample))
        bare = statistics.median(bare_samples)
        sync = statistics.median(sync_samples)
        async_time = asyncio.run(per_call_async(sources, baseline, retained))

        print(f"bare read of the sources      : {bare * 1e6:8.1f} µs")
        print(f"sampling, nothing changed     : {sync * 1e6:8.1f} µs (sync)")
        print(f"sampling, nothing changed     : {async_time * 1e6:8.1f} µs (async, to_thread)")
        print(f"ratio sync / bare             : {sync / bare:8.2f}  (goal <= 1.5)")
        print(f"ratio async / bare            : {async_time / bare:8.2f}  (reported only)")


if __name__ == "__main__":
    main()
