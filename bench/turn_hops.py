"""The hops from ``POST /v1/sessions/{sid}/turns`` to the socket (issue 23), measured in a daemon.

Run: ``.venv/bin/python bench/turn_hops.py [--source DIR ...] [--verbose]`` (default source: this
checkout; two sources print side by side). Each source's ``python -m openwork_core.daemon serve``
runs as ``bench/first_hour_local.py`` runs another checkout (``PYTHONPATH`` and working directory)
on a fresh unmigrated database (the daemon applies its own migrations) against this checkout's
fake provider, which answers its one turn with text. The daemon's code is unchanged: a
``sitecustomize`` prepended to its ``PYTHONPATH`` puts a ``sys.setprofile`` hook on its main
thread (its event loop; the SDK warm-up's thread is not profiled), which records
``traceback.extract_stack`` three times, writes them to ``$TURN_HOPS_OUT`` and removes itself:

- route: the request task at the call of ``CommandQueue.ask`` with a ``StartTurn`` (the handoff);
- actor: the task that created the writing task, where it created it (the writing task's
  registration, ``WeakSet.add`` of ``asyncio.tasks._all_tasks`` called by the C ``Task``);
- socket: the writing task at the deepest Python frame that is passed the model request's first
  bytes (``POST …/chat/completions``), plus the C call it makes if the profiler sees it.

The daemon runs uvloop, whose transport ``write`` is a Cython function: CPython 3.11 reports
``c_call`` only for exact builtin functions, so neither that write nor ``loop.create_task`` is
seen; the deepest frame (anyio's ``SocketStream.send``, which calls ``self._transport.write``) is
the last one recorded. Counted: the frames of the task's own stack (from its coroutine's frame to
the recorded one; the frames below it, ``runpy`` to ``asyncio.Runner.run``, are not counted), as
ours (``openwork_core``, ``openwork_chat_state``, ``openwork_tools``) or not. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply
from tests.support.daemon import TOKEN, start_daemon, start_turn
from tests.support.postgres import PgCluster, find_cluster

REPO = Path(__file__).resolve().parents[1]
OURS = ("openwork_core", "openwork_chat_state", "openwork_tools")
SIDES = ("route", "actor", "socket")
SITE = Path(__file__).resolve().parent / "turn_hops_site"
"""The profile hook's ``sitecustomize`` (prepended to the daemon's ``PYTHONPATH``)."""


async def measure(source: Path, cluster: PgCluster, hooks: Path) -> dict[str, Any]:
    """One daemon of ``source``, one session, one turn: the hook's record and the provider port."""
    database_url = await cluster.new_database(migrated=False)
    with (
        FakeProvider([Reply(text="Hello.")]) as fake,
        tempfile.TemporaryDirectory() as base,
    ):
        out, workspace = Path(base) / "stacks.json", Path(base) / "ws"
        workspace.mkdir()
        env = provider_env(fake) | {
            "PYTHONPATH": f"{hooks}{os.pathsep}{source}",  # and the working directory, see above
            "TURN_HOPS_OUT": str(out),
        }
        daemon = await start_daemon(
            home=Path(base) / "home", database_url=database_url, env=env, cwd=source
        )
        try:
            async with httpx.AsyncClient(
                base_url=daemon.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
            ) as client:
                made = await client.post("/v1/sessions", json={"workspace": str(workspace)})
                sid = made.json()["session_id"]
                tid = await start_turn(client, sid, "Say hello.", uuid.uuid4().hex)
                for _ in range(300):  # until the turn ended, 30 s at most
                    turn = (await client.get(f"/v1/sessions/{sid}/turns/{tid}")).json()
                    if turn.get("status") not in (None, "running"):
                        break
                    await asyncio.sleep(0.1)
        finally:
            await daemon.stop(timeout=60)
        recorded: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
        if "socket" not in recorded:
            log = "\n".join(daemon.log_lines[-20:])
            raise RuntimeError(f"{source}: no socket write recorded {recorded}\n{log}")
        recorded["provider_port"] = fake.port
        return recorded


def label(source: Path, filename: str, function: str) -> tuple[bool, str]:
    """Whether the frame is ours (and in ``source``: else marked ``!``), and ``file:function``."""
    path = Path(filename)
    for top in ("site-packages", f"python{sys.version_info[0]}.{sys.version_info[1]}"):
        if top in path.parts:
            return False, f"{'/'.join(path.parts[path.parts.index(top) + 1 :])}:{function}"
    if path.is_relative_to(source) and path.relative_to(source).parts[0] in OURS:
        return True, f"{path.relative_to(source)}:{function}"
    mine = any(part in OURS for part in path.parts)
    return mine, f"{'!' if mine else ''}{filename}:{function}"


def figures(source: Path, side: dict[str, Any] | None) -> tuple[str, list[str], int]:
    """``frames (ours + others)`` of the side's task, its frames (ours marked ``*``), ours."""
    if side is None:
        return "not recorded", [], 0
    frames = [label(source, f, name) for f, name in side["stack"][-side["task_frames"] :]]
    ours = sum(1 for mine, _ in frames if mine)
    lines = [f"{'*' if mine else ' '} {text}" for mine, text in frames]
    return f"{len(frames)} ({ours} ours + {len(frames) - ours} others)", lines, ours


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--source", type=Path, action="append", default=[])
    parser.add_argument("--verbose", action="store_true", help="print the frames")
    arguments = parser.parse_args()
    sources = [s.resolve() for s in arguments.source] or [REPO]
    for shipped in {REPO, *sources}:
        if (shipped / "sitecustomize.py").exists():
            raise SystemExit(f"{shipped} ships a sitecustomize.py: the hook would not be loaded")

    async def run() -> list[dict[str, Any]]:
        cluster = await find_cluster()
        try:
            return [await measure(source, cluster, SITE) for source in sources]
        finally:
            await cluster.drop_all()

    results = asyncio.run(run())
    rows: dict[str, list[str]] = {}
    for source, result in zip(sources, results, strict=True):
        counted = [0, 0]
        for side in SIDES:
            text, lines, ours = figures(source, result.get(side))
            counted = [counted[0] + len(lines), counted[1] + ours]
            task = re.sub(r"[0-9a-f]{16,}", "…", str((result.get(side) or {}).get("task")))
            rows.setdefault(f"{side} task frames", []).append(f"{text} [{task}]")
            if arguments.verbose:
                print(f"\n{source} — {side} ({task}):\n" + "\n".join(lines))
        rows.setdefault("all three", []).append(
            f"{counted[0]} ({counted[1]} ours + {counted[0] - counted[1]} others)"
        )
        last, peer = result["socket"]["stack"][-1], result.get("peer") or [None, None]
        unseen = "" if last[0] == "<C>" else f" → a C call not seen, of {result.get('transport')}"
        rows.setdefault("write", []).append(
            f"{last[1]}{unseen}, to port {peer[1]} (provider {result['provider_port']})"
        )
    print("\n| | " + " | ".join(str(s) for s in sources) + " |")
    print("|---" * (len(sources) + 1) + "|")
    for name, cells in rows.items():
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
