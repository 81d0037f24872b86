"""An in-memory ``SteerStore`` (issue 26 point 1) for the fast runner tests: the same idempotency
by client request id as ``turn_steers``; not durable."""

from __future__ import annotations

from openwork_core.ids import ClientRequestId
from openwork_core.session.runner.steering import Steer, SteerAccepted


class InMemorySteers:
    def __init__(self) -> None:
        self.steers: dict[ClientRequestId, Steer] = {}

    async def find(self, client_request_id: ClientRequestId) -> SteerAccepted | None:
        known = self.steers.get(client_request_id)
        return None if known is None else known.accepted

    async def record(self, steer: Steer) -> SteerAccepted:
        return self.steers.setdefault(steer.client_request_id, steer).accepted

    async def stranded(self) -> tuple[Steer, ...]:
        """Nothing outlives this process's turns here: a steer is never stranded."""
        return ()
