"""Lease renewal against concurrent loads (ownership issue; found by ``bench/load.py``): only the
leases held when a renewal started are judged by it, so a session loaded while the renewal ran is
never taken for lost; a lease the renewal did not find is."""

from __future__ import annotations

from pathlib import Path

from openwork_core.ids import SessionId
from openwork_core.storage.postgres.store import PostgresStore
from tests.support.runtime import runtime


async def test_a_session_loaded_while_a_renewal_ran_is_not_taken_for_lost(
    store: PostgresStore, tmp_path: Path
) -> None:
    async with runtime(store, tmp_path) as rt:
        registry = rt.core.sessions
        earlier = SessionId(await rt.new_session())
        await registry.load(earlier)
        held = registry.held_leases()  # the renewal starts here …
        late = SessionId(await rt.new_session())
        await registry.load(late)  # … a load commits its lease after the renewal's UPDATE …
        await registry.leases_renewed(frozenset(), held)  # … which found neither
        assert registry.get(late) is not None
        assert registry.get(earlier) is None  # held before the renewal and not renewed: lost
