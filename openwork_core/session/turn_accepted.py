"""``TurnAccepted``: what starting a turn answers (the 202's ids), in a module of its own so the
facade answers a replayed request from the database without importing the command union (and
with it the session runtime: issue 13 §3)."""

from __future__ import annotations

from dataclasses import dataclass

from openwork_core.ids import ClientRequestId, TurnId


@dataclass(frozen=True, slots=True)
class TurnAccepted:
    turn_id: TurnId
    client_request_id: ClientRequestId
