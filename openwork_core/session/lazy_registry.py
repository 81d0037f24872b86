"""The session registry, built at its first use (issue 13 §3, docs/architecture.md "Start").

Importing the session runtime — the registry and what it builds: the actor, the turn runner, the
context engine, the tool registry and built-in tools, compaction, the sub-agent host — is most of
the daemon's own import time, and nothing before the first session needs it. So the daemon listens
without it: the warm-up thread imports it right after (``import_session_runtime``), and an
operation that needs a session before that awaits ``LazyRegistry.registry()``, which imports it in
a worker thread (the event loop keeps serving) and builds the registry once.

The import runs under one process-wide lock, so the warm-up thread and an early operation never
import the runtime side by side: whichever comes second waits for the first and finds it loaded."""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from openwork_core.ids import SessionId
from openwork_core.session.updates import StreamEndReason

if TYPE_CHECKING:
    from openwork_core.session.handle import SessionHandle
    from openwork_core.session.registry import SessionRegistry

RUNTIME_MODULES = (
    "openwork_core.session.registry",
    "openwork_core.session.runner",
    "openwork_core.session.sub_agent_host",
    "openwork_core.context.engine",
    "openwork_core.models.adapters",
    "openwork_core.storage.postgres.session_storage",
    "openwork_core.storage.postgres.steers",
    "openwork_tools.builtin.registry",
    "openwork_core.desktop.context_overview",
)
"""What building the registry, running a session and the facade's session operations import (the
context overview renders an inspection): after ``import_session_runtime`` every ``from … import``
of them in the facade is a dictionary lookup."""

_import_lock = threading.Lock()


def import_session_runtime() -> None:
    """Blocking (run it in a thread): import ``RUNTIME_MODULES``; at once when they are loaded."""
    with _import_lock:
        for name in RUNTIME_MODULES:
            importlib.import_module(name)


class LazyRegistry:
    """Holds the ``SessionRegistry`` once built; before that, no session is loaded, so the
    non-loading reads (``get``, ``close``, ``forget``: the ``LoadedSessions`` the desktop queries
    use) answer without building it."""

    def __init__(self, build: Callable[[], SessionRegistry]) -> None:
        self._build = build
        self._registry: SessionRegistry | None = None
        self._building = asyncio.Lock()
        self._closing = False

    @property
    def built(self) -> SessionRegistry | None:
        return self._registry

    @property
    def closing(self) -> bool:
        return self._closing

    async def registry(self) -> SessionRegistry:
        """The registry, importing the runtime in a worker thread and building it the first
        time. Concurrent first callers wait for the same build. After ``shutdown`` it is built
        closed (its own refusals apply)."""
        registry = self._registry
        if registry is not None:
            return registry
        async with self._building:
            if self._registry is None:
                await asyncio.to_thread(import_session_runtime)
            registry = self._registry  # ``registry_now`` may have built it meanwhile
            if registry is None:
                self._registry = registry = self._build()
                if self._closing:
                    await registry.shutdown()  # empty: it only marks the registry closing
            return registry

    def registry_now(self) -> SessionRegistry:
        """The registry, importing the runtime on this thread if needed (blocking: for tests and
        benchmarks that hold a core; the daemon's own paths await ``registry()``)."""
        registry = self._registry
        if registry is None:
            import_session_runtime()
            registry = self._registry = self._build()
        return registry

    def get(self, session_id: SessionId) -> SessionHandle | None:
        return None if self._registry is None else self._registry.get(session_id)

    async def close(
        self, session_id: SessionId, reason: StreamEndReason = StreamEndReason.UNLOADED
    ) -> None:
        if self._registry is not None:
            await self._registry.close(session_id, reason)

    def forget(self, root_session_id: SessionId) -> None:
        if self._registry is not None:
            self._registry.forget(root_session_id)

    async def shutdown(self) -> None:
        """Stop every actor (none when the registry was never built)."""
        self._closing = True
        if self._registry is not None:
            await self._registry.shutdown()
