"""A session's history (issue 16 point 2): Turns, one Turn with timing and usage, rewind
targets, the latest plan, sub-agents, a Turn's trace spans."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Annotated

import orjson
from fastapi import APIRouter, Query
from pydantic import AfterValidator

from openwork_core.daemon.desktop_schemas import (
    ChildListBody,
    CompactionListBody,
    CompactionTargetBody,
    ModelNameBody,
    PlanBody,
    PlanSnapshotBody,
    SpanBody,
    TraceBody,
    TurnDetailBody,
    TurnWarningBody,
)
from openwork_core.daemon.validation import SessionIdPath, TurnIdPath
from openwork_core.desktop.cursor import parse_turn_cursor
from openwork_core.desktop.views import TurnPage
from openwork_core.plan.model import steps_from_json
from openwork_core.session.updates import UsageBody

if TYPE_CHECKING:
    from openwork_core.service import OpenWorkCore


def _check_turn_cursor(value: str | None) -> str | None:
    if value is not None:
        parse_turn_cursor(value)
    return value


TAGS: list[str | Enum] = ["history"]
"""The OpenAPI tag of these routes."""


def history_routes(router: APIRouter, core: OpenWorkCore) -> None:

    @router.get("/v1/sessions/{sid}/turns", response_model=TurnPage, tags=TAGS)
    async def list_turns(
        sid: SessionIdPath,
        cursor: Annotated[
            str | None, Query(max_length=200), AfterValidator(_check_turn_cursor)
        ] = None,
        limit: Annotated[int, Query(ge=1, le=200)] = 50,
    ) -> TurnPage:
        """Newest first."""
        before = None if cursor is None else parse_turn_cursor(cursor)
        page = await core.desktop.turns(sid, before, limit)
        hidden = await core.reverts.hidden(sid)
        if not hidden:
            return page
        turns = tuple(t.model_copy(update={"reverted": t.turn_id in hidden}) for t in page.turns)
        return page.model_copy(update={"turns": turns})

    @router.get("/v1/sessions/{sid}/turns/{tid}", response_model=TurnDetailBody, tags=TAGS)
    async def get_turn(sid: SessionIdPath, tid: TurnIdPath) -> TurnDetailBody:
        view = await core.turn_view(sid, tid)
        stored = await core.desktop.turn(sid, tid)
        warnings = await core.store.turn_warnings(tid)
        ran = await core.model_switch.turn_model(sid, tid)
        return TurnDetailBody(
            turn_id=view.turn_id,
            status=view.status.value,
            error_code=view.error_code,
            message=view.message,
            final_text=view.final_text,
            model_calls=view.model_calls,
            started_at=None if stored is None else stored.started_at,
            finished_at=None if stored is None else stored.finished_at,
            usage=UsageBody() if stored is None else stored.usage,
            model=None if ran is None else ModelNameBody(provider_id=ran[0], name=ran[1]),
            warnings=[
                TurnWarningBody(code=w.code, message=w.message, model_call=w.model_call)
                for w in warnings
            ],
        )

    @router.get("/v1/sessions/{sid}/compactions", response_model=CompactionListBody, tags=TAGS)
    async def list_compactions(sid: SessionIdPath) -> CompactionListBody:
        """Rewind targets, newest first."""
        rows = await core.desktop.compactions(sid)
        return CompactionListBody(
            compactions=[
                CompactionTargetBody(
                    compaction_id=r.compaction_id,
                    kind=r.kind,
                    sequence=r.sequence,
                    created_at=r.created_at,
                    through_message_sequence=r.through_message_sequence,
                    parent_compaction_id=r.parent_compaction_id,
                    trigger_turn_id=r.trigger_turn_id,
                    tokens_before=r.tokens_before,
                    tokens_after=r.tokens_after,
                )
                for r in rows
            ]
        )

    @router.get("/v1/sessions/{sid}/plan", response_model=PlanBody, tags=TAGS)
    async def get_plan(sid: SessionIdPath) -> PlanBody:
        row = await core.desktop.plan(sid)
        if row is None:
            return PlanBody(plan=None)
        return PlanBody(
            plan=PlanSnapshotBody(
                turn_id=row.turn_id,
                explanation=row.explanation,
                steps=list(steps_from_json(row.steps_json)),
                updated_at=row.updated_at,
            )
        )

    @router.get("/v1/sessions/{sid}/children", response_model=ChildListBody, tags=TAGS)
    async def list_children(sid: SessionIdPath) -> ChildListBody:
        return ChildListBody(children=await core.desktop.children(sid))

    @router.get("/v1/sessions/{sid}/turns/{tid}/trace", response_model=TraceBody, tags=TAGS)
    async def get_turn_trace(sid: SessionIdPath, tid: TurnIdPath) -> TraceBody:
        """Best-effort diagnostic spans in start order (a span may be missing)."""
        spans = await core.desktop.trace(sid, tid)
        return TraceBody(
            turn_id=tid,
            spans=[
                SpanBody(
                    span_id=s.span_id,
                    parent_span_id=s.parent_span_id,
                    kind=s.kind,
                    name=s.name,
                    status=s.status,
                    started_at=s.started_at,
                    ended_at=s.ended_at,
                    resolved_model_name=s.resolved_model_name,
                    provider_call_id=s.provider_call_id,
                    tool_name=s.tool_name,
                    input_tokens=s.input_tokens,
                    output_tokens=s.output_tokens,
                    error_code=s.error_code,
                    attributes=orjson.loads(s.attributes_json),
                )
                for s in spans
            ],
        )
