"""The session registry, built at its first use (issue 13 §3, issue 23 point 3;
docs/performance.md "Start").

``runtime.py`` — the registry and what it builds, the model adapters and their SDKs — is
the daemon's one deferred import: the daemon listens without it; the warm-up thread imports it
right after (``import_session_runtime``), and an operation that needs a session before that
awaits ``LazyRegistry.registry()``, which imports it in a worker thread (the event loop keeps
serving) and builds the registry once. The facade's few uses of its names import them from it
after one of these (a dictionary lookup by then).

The import runs under one process-wide lock, so the warm-up thread and an early operation never
import the runtime side by side: whichever comes second waits for the first and finds it loaded."""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import structlog

from openwork_core.ids import SessionId
from openwork_core.session.updates import StreamEndReason
from openwork_core.storage.records import ProviderKind

if TYPE_CHECKING:
    from openwork_core.session.handle import SessionHandle
    from openwork_core.session.registry import SessionRegistry

RUNTIME = "openwork_core.runtime"
"""The one deferred module; what it imports is its own import list."""

log = structlog.get_logger(__name__)

_import_lock = threading.Lock()


def import_session_runtime() -> None:
    """Blocking (run it in a thread): import ``RUNTIME``; at once when it is loaded."""
    with _import_lock:
        importlib.import_module(RUNTIME)


def warm_up_after_listen(kinds: Iterable[ProviderKind], *, sandbox_available: bool) -> None:
    """The warm-up thread (started once the daemon listens): the runtime imported (logged
    ``session_runtime.imported``: a session that comes earlier waits for it), then its warm-up of
    the tool definitions and the SDKs (``runtime.warm_up_first_use``)."""
    try:
        import_session_runtime()
    except Exception as exc:  # a bug: the first session fails on it the same way
        log.error("session_runtime.import_failed", error=f"{type(exc).__name__}: {exc}")
        return
    log.info("session_runtime.imported")
    from openwork_core.runtime import warm_up_first_use  # loaded: a lookup

    warm_up_first_use(kinds, sandbox_available=sandbox_available)


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
