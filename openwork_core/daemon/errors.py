"""The error envelope: {"error": {"code", "message", ...extra}} (daemon-api.md §2)."""

from __future__ import annotations

import orjson
from pydantic import JsonValue
from starlette.responses import Response

from openwork_chat_state import ChatStateError
from openwork_core.context.errors import SkillTooLarge
from openwork_core.models.capabilities import CapabilityError
from openwork_core.session.compaction import CheckpointRejected, CompactionError, RewindRejected
from openwork_core.session.errors import (
    ActorStopped,
    Busy,
    EmptyInput,
    InvalidWorkspace,
    NoProvider,
    PermissionNotPending,
    ReloadRequired,
    SessionActive,
    SessionError,
    TurnNotActive,
    TurnNotRecorded,
    UnknownAgent,
)
from openwork_core.session.file_changes import UnknownFileChange
from openwork_core.session.ownership import LeaseLost, SessionOwnedElsewhere
from openwork_core.session.sub_agent_host import SubAgentModeFixed
from openwork_core.skills.enablement import InvalidSkillName
from openwork_core.skills.selection import SkillSelectionError
from openwork_core.storage import RecordNotFound
from openwork_core.storage.errors import database_unavailable
from openwork_core.storage.postgres.compactions import NoCheckpoint, TranscriptQueryInvalid
from openwork_tools.errors import FileChangeError

_STATUS: dict[type[Exception], int] = {
    RecordNotFound: 404,
    InvalidWorkspace: 400,
    NoProvider: 400,
    EmptyInput: 400,
    UnknownAgent: 400,
    Busy: 409,
    ReloadRequired: 409,
    TurnNotActive: 409,
    PermissionNotPending: 409,
    SessionActive: 409,
    SubAgentModeFixed: 409,
    ActorStopped: 503,
    TurnNotRecorded: 503,
}


class JsonBytes(Response):
    media_type = "application/json"

    def render(self, content: object) -> bytes:
        return content if isinstance(content, bytes) else orjson.dumps(content)


def error_response(
    status: int, code: str, message: str, extra: dict[str, JsonValue] | None = None
) -> JsonBytes:
    body: dict[str, JsonValue] = {"code": code, "message": message, **(extra or {})}
    return JsonBytes({"error": body}, status_code=status)


def response_for(exc: Exception) -> JsonBytes:
    """Map a domain error to its status and stable code."""
    if database_unavailable(exc):
        return error_response(503, "service_unavailable", "the database is unavailable; retry")
    if isinstance(exc, RecordNotFound):
        return error_response(404, "not_found", str(exc))
    if isinstance(exc, Busy):
        return error_response(409, exc.code, str(exc), {"turn_id": exc.turn_id})
    if isinstance(exc, SessionOwnedElsewhere):
        return error_response(409, exc.code, str(exc), {"owner_url": exc.owner_url})
    if isinstance(exc, LeaseLost):
        return error_response(409, exc.code, str(exc))
    if isinstance(exc, UnknownFileChange):
        return error_response(404, exc.code, str(exc))
    if isinstance(exc, FileChangeError):
        return error_response(409, exc.code, str(exc))
    if isinstance(exc, InvalidSkillName):
        return error_response(422, exc.code, str(exc))
    if isinstance(exc, CapabilityError):
        return error_response(400, exc.code, f"the provider's model is misconfigured: {exc}")
    if isinstance(exc, NoCheckpoint):
        return error_response(404, exc.code, str(exc))
    if isinstance(exc, TranscriptQueryInvalid):
        return error_response(422, exc.code, str(exc))
    if isinstance(exc, RewindRejected | CheckpointRejected):
        return error_response(409, exc.code, str(exc))
    if isinstance(exc, CompactionError):
        # the summary model failed or the checkpoint could not be installed: not the caller's input
        return error_response(502, exc.code, str(exc))
    if isinstance(exc, SkillSelectionError | SkillTooLarge):
        return error_response(422, exc.code, str(exc))
    if isinstance(exc, SessionError):
        return error_response(_STATUS.get(type(exc), 400), exc.code, str(exc))
    if isinstance(exc, ChatStateError):
        return error_response(500, exc.code, str(exc))
    return error_response(500, "internal_error", "internal error")
