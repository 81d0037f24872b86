"""One owner per session across daemons on one database (ownership issue; session-runtime.md §1
"single owners", §10 restart correction).

A daemon registers itself and drives a session only while it holds the session's lease. Each
acquisition raises the lease's fencing epoch; every write of the session's facts carries the
writer's lease and the database refuses a stale one (``LeaseLost``), so a daemon that was paused
past its lease writes nothing after it wakes. Acquiring a session whose previous owner is gone
interrupts that owner's running turn (``process_restart``) in the same transaction."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import JsonValue

from openwork_core.ids import DaemonId, SessionId, new_daemon_id
from openwork_core.session.errors import SessionError
from openwork_core.storage.errors import StorageError

DEFAULT_LEASE_SECONDS = 30.0


@dataclass(frozen=True, slots=True, kw_only=True)
class DaemonIdentity:
    """This process as the ``daemons`` table knows it."""

    id: DaemonId
    url: str
    pid: int
    host: str
    home: str


def daemon_identity(url: str, home: Path) -> DaemonIdentity:
    """This process, serving ``url`` from ``home``."""
    return DaemonIdentity(
        id=new_daemon_id(),
        url=url,
        pid=os.getpid(),
        host=socket.gethostname(),
        home=str(home.resolve()),
    )


def in_process_identity(home: Path) -> DaemonIdentity:
    """A core without an HTTP listener (tests, tools): no URL to send clients to."""
    return daemon_identity("in-process", home)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionLease:
    session_id: SessionId
    daemon_id: DaemonId
    epoch: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaseHolder:
    """Another live daemon drives the session."""

    daemon_id: DaemonId
    url: str


class SessionOwnedElsewhere(SessionError):
    """An action on a session another daemon owns; reads of committed facts keep working."""

    code = "session_owned_elsewhere"
    http_status = 409

    def __init__(self, session_id: SessionId, holder: LeaseHolder) -> None:
        super().__init__(f"session {session_id} is driven by the daemon at {holder.url}")
        self.owner_url = holder.url

    def envelope_extra(self) -> dict[str, JsonValue]:
        return {"owner_url": self.owner_url}


class LeaseLost(StorageError):
    """A write carried a lease that is no longer the session's current one: nothing was written."""

    code = "session_lease_lost"
    http_status = 409
    message_is_ours = True


class OwnershipStorage(Protocol):
    """The ``daemons`` and ``session_leases`` tables, for one daemon."""

    @property
    def identity(self) -> DaemonIdentity: ...

    async def register(self) -> int:
        """Register this daemon; release the leases of earlier daemons of the same home (the
        home lock proves they are gone) and interrupt every running turn no live daemon owns.
        Returns the number of turns interrupted."""
        ...

    async def acquire(self, session_id: SessionId) -> SessionLease | LeaseHolder:
        """Take the session's lease (a new epoch, above every earlier one) unless another live daemon holds it; a running
        turn nobody drives any more becomes ``interrupted`` / ``process_restart``."""
        ...

    async def holder(self, session_id: SessionId) -> LeaseHolder | None:
        """The other live daemon holding the session, if any."""
        ...

    async def last_epoch(self, session_id: SessionId) -> int:
        """The last lease epoch the session was given (0 before its first load): the next one is
        above it, whoever takes it."""
        ...

    async def renew(self) -> frozenset[SessionId]:
        """Heartbeat and extend every lease still ours; returns the sessions it extended."""
        ...

    async def release(self, lease: SessionLease) -> None: ...

    async def stop(self) -> None:
        """A clean exit: give every lease back and mark the daemon stopped."""
        ...
