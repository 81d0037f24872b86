"""The daemon listens without the session runtime (issue 13 §3, docs/performance.md "Start"):
what the start path imports, checked in a fresh interpreter each (nothing here is cached), and
the registry built at its first need — by whichever of the warm-up and an operation comes first."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from typing import cast

import pytest

from openwork_core import lazy_registry
from openwork_core.ids import SessionId
from openwork_core.lazy_registry import LazyRegistry, import_session_runtime
from openwork_core.session.registry import SessionRegistry

RUNTIME = (
    "openwork_core.runtime",
    "openwork_core.session.registry",
    "openwork_core.session.actor",
    "openwork_core.session.runner",
    "openwork_core.models.adapters",
    "openwork_core.desktop.context_overview",
    "openwork_core.context.engine",
    "openwork_core.session.compaction.generation",
    "openwork_core.models.port",
    "openwork_tools.builtin.registry",
    "openwork_chat_state.actor",
)
"""What only a running session needs; ``import_session_runtime`` loads it after listen (the
one deferred module, ``runtime.py``: the registry and its actor, the turn runner, the context
engine, the summary generation, the model port and adapters, the built-in tools, the Chat State
actor). A package ``__init__`` that re-exported one of these would put it on the start path
(issue 23 point 3): they re-export nothing."""

NEVER_AT_START = ("openai", "anthropic", "httpx", "typer")


def _loaded_after(code: str, names: tuple[str, ...]) -> dict[str, bool]:
    """``code`` runs first in a fresh interpreter; then which of ``names`` are imported."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import json, sys\n{code}\nprint(json.dumps({{m: m in sys.modules for m in {names!r}}}))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(result, dict)
    return cast(dict[str, bool], result)


START_PATH = "import openwork_core.cli.server_run, openwork_core.daemon.server\n"


def test_the_start_path_imports_no_session_runtime_or_sdk() -> None:
    """Issue 23 point 3: the daemon listens before the session runtime is imported."""
    loaded = _loaded_after(START_PATH, RUNTIME + NEVER_AT_START)
    assert loaded == dict.fromkeys(RUNTIME + NEVER_AT_START, False)


def test_importing_the_session_runtime_loads_what_a_session_runs_and_no_sdk_yet() -> None:
    """The SDKs come with the first adapter of their kind
    (tests/integration/models/test_lazy_sdk_imports.py)."""
    code = START_PATH + (
        "from openwork_core.lazy_registry import import_session_runtime\nimport_session_runtime()\n"
    )
    sdks = ("openai", "anthropic")
    expected = dict.fromkeys(RUNTIME, True) | dict.fromkeys(sdks, False)
    assert _loaded_after(code, RUNTIME + sdks) == expected


class _FakeRegistry:
    def __init__(self) -> None:
        self.shut_down = False

    async def shutdown(self) -> None:
        self.shut_down = True


def _counting_build() -> tuple[LazyRegistry, list[_FakeRegistry]]:
    built: list[_FakeRegistry] = []

    def build() -> SessionRegistry:
        built.append(_FakeRegistry())
        return cast(SessionRegistry, built[-1])

    return LazyRegistry(build), built


async def test_concurrent_first_operations_build_one_registry() -> None:
    lazy, built = _counting_build()
    registries = await asyncio.gather(*(lazy.registry() for _ in range(5)))
    assert len(built) == 1
    assert all(r is built[0] for r in registries)
    assert lazy.built is built[0]


async def test_an_operation_during_the_warm_up_import_waits_for_it_and_succeeds() -> None:
    """The warm-up thread and the first operation import side by side, in either order."""
    lazy, built = _counting_build()
    warm_up = threading.Thread(target=import_session_runtime)
    warm_up.start()
    registry = await lazy.registry()
    await asyncio.to_thread(warm_up.join, 60)
    assert not warm_up.is_alive()
    assert registry is built[0] and len(built) == 1


async def test_reads_before_the_first_session_build_nothing() -> None:
    """Before the registry exists no session is loaded: ``get`` answers None, ``close`` and
    ``forget`` have nothing to do (the desktop queries use them on any session)."""
    lazy, built = _counting_build()
    session_id = SessionId("ses_never_loaded")
    assert lazy.get(session_id) is None
    await lazy.close(session_id)
    lazy.forget(session_id)
    assert built == [] and lazy.built is None


async def test_a_registry_built_after_shutdown_is_built_closed() -> None:
    lazy, built = _counting_build()
    await lazy.shutdown()
    assert lazy.closing
    await lazy.registry()
    assert built[0].shut_down


async def test_a_synchronous_build_during_the_first_operations_import_is_the_one_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``registry_now`` (tests, benchmarks) while ``registry()`` awaits its import thread: one
    registry, not two."""
    entered, release = threading.Event(), threading.Event()

    def held_import() -> None:
        if entered.is_set():  # ``registry_now``'s own import: the module is loaded by then
            return
        entered.set()
        assert release.wait(30)

    monkeypatch.setattr(lazy_registry, "import_session_runtime", held_import)
    lazy, built = _counting_build()
    pending = asyncio.ensure_future(lazy.registry())
    assert await asyncio.to_thread(entered.wait, 30)  # the operation awaits its import thread
    now = lazy.registry_now()
    release.set()
    assert await pending is now
    assert built == [now]
