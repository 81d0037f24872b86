"""The HTTP + SSE routes of daemon-api.md over OpenWorkCore."""

from __future__ import annotations

import asyncio
from typing import Annotated

import asyncpg
import orjson
from fastapi import FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from pydantic import JsonValue
from sse_starlette.sse import EventSourceResponse
from starlette.responses import Response

from openwork_chat_state import ChatStateError
from openwork_core.context.errors import SkillTooLarge
from openwork_core.daemon.errors import JsonBytes, error_response, response_for
from openwork_core.daemon.schemas import (
    AppliedChangeBody,
    AppliedChangesBody,
    CompactionBody,
    CreateSessionBody,
    FileChangesBody,
    HealthBody,
    MessageBody,
    MessagePageBody,
    PermissionDecisionBody,
    PermissionModeBody,
    ProviderBody,
    ProviderList,
    ProviderModelBody,
    RewindBody,
    SessionBody,
    SessionList,
    SessionWithSnapshot,
    SkillBody,
    SkillListBody,
    SkillStatusBody,
    SkillWarningBody,
    StartTurnBody,
    TextInputBody,
    TurnAcceptedBody,
    TurnBody,
)
from openwork_core.daemon.security import SecurityMiddleware
from openwork_core.daemon.session_list import session_list
from openwork_core.daemon.sse import global_events, session_events
from openwork_core.ids import CompactionId, SessionId, ToolCallId, TurnId
from openwork_core.models.capabilities import CapabilityError
from openwork_core.service import OpenWorkCore
from openwork_core.session.approval import PermissionDecision
from openwork_core.session.compaction import CompactionError
from openwork_core.session.errors import SessionError, TurnNotActive
from openwork_core.session.file_changes import UnknownFileChange
from openwork_core.session.input import SkillInput, TextInput, UserInput
from openwork_core.session.wire import wire_json
from openwork_core.skills.enablement import InvalidSkillName, SkillListing
from openwork_core.skills.selection import SkillSelectionError
from openwork_core.storage import StorageError
from openwork_core.storage.records import (
    ProviderModel,
    ProviderRecord,
    SessionRecord,
    StoredMessage,
)
from openwork_tools.errors import FileChangeError
from openwork_tools.undo import ChangeDirection


def _session_body(record: SessionRecord) -> SessionBody:
    return SessionBody(
        session_id=record.id,
        workspace=record.working_directory,
        agent=record.agent,
        provider=record.provider_id,
        model=record.model_name,
        permission_mode=record.sandbox_mode,
        created_at=record.created_at,
    )


def _provider_body(provider: ProviderRecord) -> ProviderBody:
    return ProviderBody(
        id=provider.id,
        kind=provider.kind,
        base_url=provider.base_url,
        api_key_env=provider.api_key_env,
        models=[
            ProviderModelBody(
                name=m.name,
                context_window=m.context_window,
                max_output_tokens=m.max_output_tokens,
                max_reasoning_tokens=m.max_reasoning_tokens,
                accepts_data_blocks=m.accepts_data_blocks,
            )
            for m in provider.models
        ],
    )


def _skill_list(listing: SkillListing) -> SkillListBody:
    return SkillListBody(
        skills=[
            SkillBody(
                source=s.source,
                name=s.name,
                description=s.description,
                path=s.path,
                disabled=s.disabled,
            )
            for s in listing.skills
        ],
        warnings=[SkillWarningBody(path=w.path, reason=w.reason) for w in listing.warnings],
    )


def _message_json(message: StoredMessage) -> JsonValue:
    return MessageBody(
        message_id=message.id,
        sequence=message.sequence,
        turn_id=message.turn_id,
        role=message.role.value,
        kind=message.kind.value,
        content=orjson.loads(message.content),
        created_at=message.created_at,
    ).model_dump(mode="json")


def _inputs(body: StartTurnBody) -> list[UserInput]:
    return [
        TextInput(text=part.text)
        if isinstance(part, TextInputBody)
        else SkillInput(name=part.name, path=part.path)
        for part in body.input
    ]


def create_app(
    core: OpenWorkCore,
    *,
    token: str,
    allowed_origins: frozenset[str],
    allow_remote: bool,
    version: str,
    shutdown: asyncio.Event,
) -> FastAPI:
    app = FastAPI(
        title="OpenWork daemon",
        version=version,
        openapi_url="/v1/openapi.json",
        docs_url=None,
        redoc_url=None,
    )
    app.add_middleware(
        SecurityMiddleware,
        token=token,
        allowed_origins=allowed_origins,
        allow_remote=allow_remote,
    )

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> Response:
        errors: list[JsonValue] = [
            {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))}
            for e in exc.errors()
        ]
        return error_response(
            422, "invalid_request", "the request body is invalid", {"errors": errors}
        )

    for error_type in (
        FileChangeError,
        UnknownFileChange,
        InvalidSkillName,
        CapabilityError,
        CompactionError,
        SessionError,
        StorageError,
        ChatStateError,
        SkillSelectionError,
        SkillTooLarge,
        OSError,
        asyncpg.PostgresError,
        asyncpg.InterfaceError,
    ):

        @app.exception_handler(error_type)
        async def _domain(_request: Request, exc: Exception) -> Response:
            return response_for(exc)

    @app.get("/v1/health", response_model=HealthBody)
    async def health() -> Response:
        try:
            await core.store.ping()
            database = "ok"
        except Exception:
            database = "error"
        body = HealthBody(
            status="ok" if database == "ok" else "degraded", version=version, database=database
        )
        return JsonBytes(body.model_dump(), status_code=200 if database == "ok" else 503)

    @app.get("/v1/providers", response_model=ProviderList)
    async def list_providers() -> ProviderList:
        return ProviderList(
            providers=[_provider_body(p) for p in await core.store.list_providers()]
        )

    @app.put("/v1/providers/{provider_id}", response_model=ProviderBody)
    async def put_provider(provider_id: str, body: ProviderBody) -> ProviderBody:
        if "/" in provider_id or not provider_id.strip():
            raise _BadProviderId(provider_id)
        record = ProviderRecord(
            id=provider_id,
            kind=body.kind,
            base_url=body.base_url,
            api_key_env=body.api_key_env,
            models=tuple(ProviderModel(**m.model_dump()) for m in body.models),
        )
        return _provider_body(await core.store.upsert_provider(record))

    @app.get("/v1/skills", response_model=SkillListBody)
    async def list_skills() -> SkillListBody:
        return _skill_list(await core.skills.listing())

    @app.put("/v1/skills/{name}", response_model=SkillListBody)
    async def set_skill(name: str, body: SkillStatusBody) -> SkillListBody:
        return _skill_list(await core.skills.set_disabled(name, body.disabled))

    @app.post("/v1/sessions", status_code=201, response_model=SessionBody)
    async def create_session(body: CreateSessionBody) -> SessionBody:
        record = await core.create_session(
            workspace=body.workspace,
            agent=body.agent,
            provider=body.provider,
            model=body.model,
            permission_mode=body.permission_mode,
        )
        return _session_body(record)

    @app.get("/v1/sessions", response_model=SessionList)
    async def list_sessions() -> SessionList:
        records = await core.list_sessions()
        activity = await core.store.session_activity([r.id for r in records])
        return session_list(records, activity, _session_body)

    @app.get("/v1/sessions/{sid}", response_model=SessionWithSnapshot)
    async def get_session(sid: SessionId) -> Response:
        record = await core.get_session(sid)
        snapshot = await core.snapshot(sid)
        body = _session_body(record).model_dump(mode="json")
        body["snapshot"] = orjson.loads(wire_json(snapshot))
        return JsonBytes(body)

    @app.post("/v1/sessions/{sid}/turns", status_code=202, response_model=TurnAcceptedBody)
    async def start_turn(sid: SessionId, body: StartTurnBody) -> TurnAcceptedBody:
        accepted = await core.start_turn(
            sid,
            client_request_id=body.client_request_id,
            inputs=_inputs(body),
            disabled_skill_names=body.disabled_skill_names,
        )
        return TurnAcceptedBody(turn_id=accepted.turn_id)

    @app.get("/v1/sessions/{sid}/turns/{tid}", response_model=TurnBody)
    async def get_turn(sid: SessionId, tid: TurnId) -> TurnBody:
        view = await core.turn_view(sid, tid)
        return TurnBody(
            turn_id=view.turn_id,
            status=view.status.value,
            error_code=view.error_code,
            message=view.message,
            final_text=view.final_text,
            model_calls=view.model_calls,
        )

    @app.post("/v1/sessions/{sid}/turns/{tid}/cancel", status_code=202)
    async def cancel_turn(sid: SessionId, tid: TurnId) -> Response:
        try:
            await core.cancel_turn(sid, tid)
        except TurnNotActive:
            await core.turn_view(sid, tid)  # an unknown turn is 404 not_found, not 409
            raise
        return JsonBytes({"turn_id": tid}, status_code=202)

    @app.post("/v1/sessions/{sid}/turns/{tid}/permissions/{tool_call_id}", status_code=202)
    async def resolve_permission(
        sid: SessionId, tid: TurnId, tool_call_id: ToolCallId, body: PermissionDecisionBody
    ) -> Response:
        try:
            await core.resolve_permission(sid, tid, tool_call_id, PermissionDecision(body.decision))
        except TurnNotActive:
            await core.turn_view(sid, tid)  # an unknown turn is 404 not_found, not 409
            raise
        return JsonBytes({"turn_id": tid, "tool_call_id": tool_call_id}, status_code=202)

    @app.put("/v1/sessions/{sid}/permission-mode", response_model=SessionBody)
    async def set_mode(sid: SessionId, body: PermissionModeBody) -> SessionBody:
        return _session_body(await core.set_permission_mode(sid, body.mode))

    @app.get("/v1/sessions/{sid}/messages", response_model=MessagePageBody)
    async def list_messages(
        sid: SessionId,
        after_sequence: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=500)] = 100,
    ) -> Response:
        page = await core.list_messages(sid, after_sequence=after_sequence, limit=limit)
        body = {
            "messages": [_message_json(m) for m in page.messages],
            "has_more": page.has_more,
            "next_after_sequence": page.next_after_sequence,
        }
        return JsonBytes(body)

    @app.post("/v1/sessions/{sid}/compact", response_model=CompactionBody)
    async def compact(sid: SessionId) -> CompactionBody:
        result = await core.compact(sid)
        return CompactionBody(
            compaction_id=result.compaction_id,
            before_tokens=result.before_tokens,
            after_tokens=result.after_tokens,
        )

    @app.post("/v1/sessions/{sid}/rewind", response_model=CompactionBody)
    async def rewind(sid: SessionId, body: RewindBody) -> CompactionBody:
        result = await core.rewind(sid, body.compaction_id)
        return CompactionBody(
            compaction_id=result.compaction_id,
            before_tokens=result.before_tokens,
            after_tokens=result.after_tokens,
        )

    @app.get("/v1/sessions/{sid}/transcript")
    async def transcript(
        sid: SessionId,
        compaction_id: CompactionId | None = None,
        after_sequence: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=50)] = 20,
    ) -> Response:
        page = await core.read_transcript(
            sid, compaction_id=compaction_id, after_sequence=after_sequence, limit=limit
        )
        return JsonBytes(
            {
                "compaction_id": page.compaction_id,
                "through_message_sequence": page.through_message_sequence,
                "messages": [_message_json(m) for m in page.messages],
                "has_more": page.has_more,
                "next_after_sequence": page.next_after_sequence,
            }
        )

    @app.post("/v1/sessions/{sid}/file-changes/{direction}", response_model=AppliedChangesBody)
    async def file_changes(
        sid: SessionId, direction: ChangeDirection, body: FileChangesBody
    ) -> AppliedChangesBody:
        applied = await core.apply_file_changes(sid, body.change_ids, direction)
        return AppliedChangesBody(
            changes=[
                AppliedChangeBody(change_id=c.change_id, path=c.path, undone=c.undone)
                for c in applied
            ]
        )

    @app.get("/v1/sessions/{sid}/context")
    async def inspect_context(sid: SessionId) -> Response:
        return JsonBytes((await core.inspect_context_window(sid)).to_json())

    @app.get("/v1/sessions/{sid}/events")
    async def events(
        sid: SessionId,
        after_sequence: Annotated[int | None, Query(ge=0)] = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> Response:
        cursor = after_sequence
        if last_event_id is not None and last_event_id.strip().isdigit():
            cursor = int(last_event_id.strip())
        await core.get_session(sid)
        replay, subscription = await core.subscribe(sid, cursor)
        return EventSourceResponse(
            session_events(sid, replay, subscription, shutdown), ping=15, send_timeout=30
        )

    @app.get("/v1/events")
    async def all_events() -> Response:
        subscription = core.global_updates.subscribe()
        return EventSourceResponse(global_events(subscription, shutdown), ping=15, send_timeout=30)

    @app.exception_handler(_BadProviderId)
    async def _bad_provider(_request: Request, exc: _BadProviderId) -> Response:
        return error_response(422, "invalid_request", str(exc))

    return app


class _BadProviderId(Exception):
    def __init__(self, provider_id: str) -> None:
        super().__init__(f"invalid provider id: {provider_id!r} (non-blank, no '/')")
