"""The statements of a session's steady path: what creating a session, loading it, taking its
lease, starting a turn, writing its model calls and tool results, finishing it and tracing it
run. Every pool connection prepares them before it serves a turn (``PoolWarmth``), so the first
turn after a start pays no statement preparation (issue 13 §3: the first model call no slower
than the second). ``tests/integration/storage/test_statement_priming.py`` runs such turns on a
warmed pool and names any statement they still had to prepare: one added to that path belongs
here."""

from __future__ import annotations

from openwork_core.storage.postgres import (
    agents,
    compactions,
    fenced,
    messages,
    ownership,
    providers,
    sessions,
    traces,
    turns,
)

STEADY_STATEMENTS: tuple[str, ...] = (
    traces.SPAN_BATCH,  # first: its parameters hold both array types asyncpg looks up, one query
    providers.PROVIDERS,
    providers.PROVIDER_BY_ID,
    sessions.INSERT_SESSION,
    sessions.SESSION_BY_ID,
    sessions.LOCK_SESSION,
    ownership.LEASE_FOR_UPDATE,
    ownership.TAKE_LEASE,
    ownership.INTERRUPT_SESSION_TURNS,
    ownership.CHECK_LEASE,
    compactions.LATEST_CHECKPOINT,
    messages.MESSAGES_AFTER,
    agents.CHILDREN,
    agents.CHILD_TERMINAL_TURNS,
    agents.DELIVERED_AGENT_MESSAGES,
    agents.DELETE_TURNLESS_CHILDREN,
    turns.TURN_BY_CLIENT_REQUEST,
    turns.INSERT_TURN,
    turns.TOUCH_SESSION,
    *fenced.LEASED_STATEMENTS,
)
