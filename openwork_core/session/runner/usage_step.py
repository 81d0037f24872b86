"""What one completed submission cost and how it used the prompt cache (issue 14 points 5, 9):
the ``ModelCallRecord`` written with its assistant message, and the log lines of a suspected
silent truncation or a cache miss. The rules are ``openwork_core.session.prompt_cache``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import structlog

from openwork_core.context.engine import PreparedModelCall
from openwork_core.context.inspection import InspectionUsage
from openwork_core.session.prompt_cache import (
    RequestFingerprint,
    cache_miss,
    fingerprint,
    idle_seconds,
    shared_prefix,
    truncation_suspected,
)
from openwork_core.session.storage import SessionStorage
from openwork_core.storage.errors import database_unavailable
from openwork_core.storage.usage_records import ModelCallRecord
from openwork_core.usage import TokenUsage

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class CallLedger:
    """The fingerprint of the session's previous completed submission (actor memory: after a
    restart the first call has nothing to compare with)."""

    previous: RequestFingerprint | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubmissionFacts:
    model_call: int
    submission: int
    provider_id: str
    at: datetime


def model_call_record(
    previous: RequestFingerprint | None,
    prepared: PreparedModelCall,
    usage: TokenUsage | None,
    facts: SubmissionFacts,
) -> tuple[ModelCallRecord, RequestFingerprint]:
    """Pure: the submission's record and the fingerprint the next call compares with."""
    current = fingerprint(facts.provider_id, prepared, facts.at, previous)
    stored = usage or TokenUsage()
    estimated = prepared.budget.estimated_input_tokens
    shared = None if previous is None else shared_prefix(previous, current)
    miss = (
        None
        if previous is None or shared is None
        else cache_miss(previous, current, shared, stored.cached_input_tokens)
    )
    record = ModelCallRecord(
        model_call=facts.model_call,
        submission=facts.submission,
        provider_id=facts.provider_id,
        model_name=prepared.request.model,
        usage=stored,
        estimated_input_tokens=estimated,
        input_truncation_suspected=truncation_suspected(estimated, stored.input_tokens),
        stable_prefix_hash=current.stable_prefix_hash,
        request_bytes=current.request_bytes,
        shared_prefix_bytes=None if shared is None else shared.bytes,
        cache_miss=miss,
        idle_seconds=None if previous is None else idle_seconds(previous, current),
    )
    return record, current


def log_record(record: ModelCallRecord) -> None:
    if record.input_truncation_suspected:
        log.warning(
            "model.input_truncation_suspected",
            estimated_input_tokens=record.estimated_input_tokens,
            reported_input_tokens=record.usage.input_tokens,
            model=record.model_name,
        )
    miss = record.cache_miss
    if miss is not None:
        log.info(
            "model.cache_miss",
            cause=miss.cause.value,
            item=miss.item,
            cached_input_tokens=record.usage.cached_input_tokens,
            shared_prefix_bytes=record.shared_prefix_bytes,
            idle_seconds=record.idle_seconds,
        )


async def inspection_usage(storage: SessionStorage) -> InspectionUsage | None:
    """The inspection's real numbers; ``None`` while the database is unreachable (the rest of
    the inspection needs no database)."""
    try:
        last = await storage.last_model_call()
        totals = await storage.usage_totals()
    except Exception as exc:
        if database_unavailable(exc):
            return None
        raise
    return InspectionUsage.of(last, totals)
