"""SessionRegistry: the live sessions of this process (session-runtime.md §1, multi-agent.md §1).
It loads a session's actor on first use, rebuilds one whose checkpoint could not be installed
(compaction.md §7), stops actors, keeps each root's sub-agent host, and resolves the session's
model. It is the ``SessionDirectory`` the sub-agent hosts receive."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

import structlog

from openwork_core.agents.control import AgentControl
from openwork_core.ids import SessionId
from openwork_core.models.capabilities import resolve_capabilities
from openwork_core.models.port import ModelPort
from openwork_core.session.build import SessionDeps, build_session_handle
from openwork_core.session.commands import SessionStatus
from openwork_core.session.errors import ActorStopped, NoProvider, ReloadRequired
from openwork_core.session.handle import SessionHandle
from openwork_core.session.ownership import (
    LeaseHolder,
    OwnershipStorage,
    SessionLease,
    SessionOwnedElsewhere,
)
from openwork_core.session.registry_settings import (
    ApiKeyLookup,
    LoadLimits,
    ModelPortFactory,
    ProviderLookup,
    ServedWindowLookup,
    environment_key,
    not_probed,
)
from openwork_core.session.runner.context import ResolvedModel
from openwork_core.session.storage import (
    ChildSessionStorage,
    ProviderModel,
    ProviderRecord,
    RecordNotFound,
    SessionRecord,
)
from openwork_core.session.sub_agent_host import SubAgentHost
from openwork_core.session.updates import StreamEndReason

log = structlog.get_logger(__name__)

__all__ = ["LoadLimits", "ModelPortFactory", "SessionRegistry", "environment_key"]


async def _status(handle: SessionHandle) -> SessionStatus | None:
    """The actor's status; None when its actor stopped."""
    try:
        return await handle.status()
    except ActorStopped:
        return None


def _child_ids(host: SubAgentHost) -> list[SessionId]:
    control = host.control
    named = (control.session_of(name) for name in control.task_names())
    return [SessionId(sid) for sid in named if sid is not None]


class SessionRegistry:
    """The ``SessionDirectory`` of this process."""

    def __init__(
        self,
        *,
        deps: SessionDeps,
        children: ChildSessionStorage,
        get_provider: ProviderLookup,
        model_ports: ModelPortFactory,
        ownership: OwnershipStorage,
        limits: LoadLimits | None = None,
        api_key: ApiKeyLookup = environment_key,
        served_window: ServedWindowLookup = not_probed,
    ) -> None:
        self._limits = limits or LoadLimits()
        self._last_used: dict[str, float] = {}
        self._deps = deps
        self._ownership = ownership
        self._leases: dict[SessionId, SessionLease] = {}
        self._children = children
        self._get_provider = get_provider
        self._model_ports = model_ports
        self._api_key = api_key
        self._served_window = served_window
        self._ports: dict[ProviderRecord, tuple[str | None, ModelPort]] = {}
        self._handles: dict[SessionId, SessionHandle] = {}
        self._load_locks: dict[SessionId, asyncio.Lock] = {}
        self._hosts: dict[str, SubAgentHost] = {}
        self._closing = False

    @property
    def closing(self) -> bool:
        return self._closing

    # -- the directory -------------------------------------------------------------------------
    def get(self, session_id: SessionId) -> SessionHandle | None:
        """The live handle, if loaded; never one whose actor stopped (reads then go to the
        database, and the next load builds a new actor)."""
        handle = self._handles.get(session_id)
        return None if handle is None or handle.stopped else handle

    async def load(self, session_id: SessionId) -> SessionHandle:
        """The live handle; an idle actor whose checkpoint could not be installed is rebuilt
        from the database first (compaction.md §7), and so is one whose actor stopped by itself
        (a crash: issue 22 point 7)."""
        handle, _ = await self._current(session_id)
        if len(self._handles) > self._limits.max_loaded:
            await self.unload_idle(keep=session_id)
        return handle

    async def load_for_turn(self, session_id: SessionId) -> SessionHandle:
        """Like ``load``, but a stale idle actor refuses this one turn with ``ReloadRequired``
        (its replacement is built on the next access): both sentences of compaction.md §7."""
        handle, rebuilt = await self._current(session_id, refuse_stale=True)
        if rebuilt:
            raise ReloadRequired()
        return handle

    async def _current(
        self, session_id: SessionId, *, refuse_stale: bool = False
    ) -> tuple[SessionHandle, bool]:
        lock = self._load_locks.setdefault(session_id, asyncio.Lock())
        async with lock:
            existing = self._handles.get(session_id)
            if existing is not None:
                status = await _status(existing)
                if status is not None and (not status.reload_required or status.busy):
                    self._last_used[session_id] = time.monotonic()
                    return existing, False
                self._handles.pop(session_id, None)
                await existing.shutdown()
                if status is None:
                    log.warning("session.actor_rebuilt", session_id=session_id)
                elif refuse_stale:
                    return existing, True
            handle = await self._build(session_id)
            self._handles[session_id] = handle
            self._last_used[session_id] = time.monotonic()
            return handle, False

    async def close(
        self, session_id: SessionId, reason: StreamEndReason = StreamEndReason.UNLOADED
    ) -> None:
        """Stop the actor (its streams end with ``reason``) and give its lease back (another
        daemon may take the session at once)."""
        handle = self._handles.pop(session_id, None)
        self._last_used.pop(session_id, None)
        if handle is not None:
            await handle.shutdown(reason)
        lease = self._leases.pop(session_id, None)
        if lease is not None:
            await self._ownership.release(lease)

    def held_leases(self) -> dict[SessionId, SessionLease]:
        """The leases held now: what a renewal that starts now must find still ours."""
        return dict(self._leases)

    async def leases_renewed(
        self, still_ours: frozenset[SessionId], held: Mapping[SessionId, SessionLease]
    ) -> None:
        """After a renewal: a loaded session whose lease another daemon took is stopped here (its
        writes are already refused by the fence). Only the leases ``held`` when the renewal
        started are judged: a session loaded while it ran took a fresh lease the renewal's
        ``UPDATE`` could not see (found under 100 concurrent loads by ``bench/load.py``)."""
        lost = [
            sid
            for sid, lease in held.items()
            if sid not in still_ours and self._leases.get(sid) is lease
        ]
        for session_id in lost:
            log.warning("session.lease_lost", session_id=session_id)
            self._leases.pop(session_id, None)
            handle = self._handles.pop(session_id, None)
            if handle is not None:
                await handle.shutdown()

    def forget(self, root_session_id: SessionId) -> None:
        """Drop a deleted root's sub-agent host and load lock (its rows are gone)."""
        self._hosts.pop(root_session_id, None)
        self._load_locks.pop(root_session_id, None)

    async def shutdown(self) -> None:
        """Cancel active turns (outcome cancelled) and stop every actor."""
        self._closing = True
        handles = list(self._handles.values())
        self._handles.clear()
        async with asyncio.TaskGroup() as group:
            for handle in handles:
                group.create_task(handle.shutdown())
        self._leases.clear()  # given back together by ``OwnershipStorage.stop``

    # -- unloading -------------------------------------------------------------------------------
    async def unload_idle(
        self, now: float | None = None, keep: SessionId | None = None
    ) -> list[SessionId]:
        """Unload sessions idle longer than ``idle_seconds`` and, beyond ``max_loaded``, the least
        recently used ones — never one with a running turn or compaction, a pending approval or
        a client watching it; a root goes together with its children (and stays while any of
        them is busy). A session whose actor stopped by itself goes first. Returns the unloaded
        ids."""
        moment = time.monotonic() if now is None else now
        unloaded = [sid for sid, handle in self._handles.items() if handle.stopped]
        for dead in unloaded:
            await self.close(dead)  # its actor stopped by itself: gone, its lease given back
        order = sorted(self._handles, key=lambda sid: self._last_used.get(sid, 0.0))
        excess = len(order) - self._limits.max_loaded
        for session_id in order:
            idle_for = moment - self._last_used.get(session_id, 0.0)
            evictable = excess > 0 and idle_for >= self._limits.eviction_grace_seconds
            if session_id == keep or (idle_for < self._limits.idle_seconds and not evictable):
                continue
            if session_id not in self._handles or session_id in self._children_of_loaded_roots():
                continue  # already gone with its root, or goes with it
            group = [*self._loaded_children(session_id), session_id]
            if not await self._all_quiet(group):
                continue
            for member in group:
                await self.close(member)
                unloaded.append(member)
            self._hosts.pop(session_id, None)
            excess -= len(group)
        if unloaded:
            log.info("sessions.unloaded", count=len(unloaded), loaded=len(self._handles))
        return unloaded

    def _children_of_loaded_roots(self) -> set[SessionId]:
        return {
            child
            for root, host in self._hosts.items()
            if root in self._handles
            for child in _child_ids(host)
        }

    def _loaded_children(self, root_id: SessionId) -> list[SessionId]:
        host = self._hosts.get(root_id)
        return [] if host is None else [c for c in _child_ids(host) if c in self._handles]

    async def _all_quiet(self, session_ids: list[SessionId]) -> bool:
        for session_id in session_ids:
            handle = self._handles.get(session_id)
            if handle is None:
                continue
            status = await _status(handle)
            if status is not None and (status.busy or status.pending_permission or status.watchers):
                return False
        return True

    # -- sub-agents ------------------------------------------------------------------------------
    async def agent_host(self, root_session_id: SessionId) -> SubAgentHost:
        """The root's sub-agent host; its ``AgentControl`` is restored from the child rows the
        first time (multi-agent.md §2: no child started, no slot taken)."""
        host = self._hosts.get(root_session_id)
        if host is None:
            children = await self._children.list_children(root_session_id)
            host = self._hosts.get(root_session_id)
            if host is None:
                control = AgentControl.restore(root_session_id, children)
                host = SubAgentHost(self, self._children, control)
                self._hosts[root_session_id] = host
        return host

    async def _build(self, session_id: SessionId) -> SessionHandle:
        """Take the session's lease, then ``build_session_handle`` (multi-agent.md §1): roots
        and children alike. ``SessionOwnedElsewhere`` when another live daemon drives it."""
        with structlog.contextvars.bound_contextvars(session_id=session_id):  # load's log lines
            return await self._build_bound(session_id)

    async def _build_bound(self, session_id: SessionId) -> SessionHandle:
        record = await self._children.get_session(session_id)
        host = await self.agent_host(record.parent_session_id or record.id)
        lease = await self._ownership.acquire(session_id)
        if isinstance(lease, LeaseHolder):
            raise SessionOwnedElsewhere(session_id, lease)
        try:
            handle = await build_session_handle(self._deps, record, host, lease)
        except BaseException:
            await self._ownership.release(lease)
            raise
        self._leases[session_id] = lease
        return handle

    # -- models ------------------------------------------------------------------------------------
    async def resolve_model(self, record: SessionRecord) -> ResolvedModel:
        """The session's provider, model, capabilities and (cached) port; NoProvider otherwise."""
        if record.provider_id is None:
            raise NoProvider("the session has no model provider")
        try:
            provider = await self._get_provider(record.provider_id)
        except RecordNotFound as exc:
            raise NoProvider(f"unknown model provider: {record.provider_id}") from exc
        model = provider.model(record.model_name)
        if model is None and not provider.models and record.model_name is not None:
            model = ProviderModel(name=record.model_name)  # numbers from the catalog or fallback
        if model is None:
            raise NoProvider(
                f"provider {provider.id} has no model {record.model_name or '(default)'}"
            )
        served = self._served_window(provider.id, model.name)
        resolved = resolve_capabilities(
            model, provider.settings, None if served is None else served.tokens
        )
        capabilities = resolved.capabilities
        key = self._api_key(provider)
        cached = self._ports.get(provider)
        if cached is not None and cached[0] == key:
            port = cached[1]
        else:  # a new or rotated key builds a new port (a running turn keeps its old one)
            port = self._model_ports(provider, key)
            self._ports[provider] = (key, port)
        return ResolvedModel(
            provider=provider, model=model, capabilities=capabilities, port=port, served=served
        )
