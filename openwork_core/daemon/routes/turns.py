"""Turn routes (daemon-api.md §3): start, read, cancel, resolve a permission request."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter
from starlette.responses import Response

from openwork_core.daemon.errors import InvalidBody, JsonBytes
from openwork_core.daemon.schemas import (
    PermissionDecisionBody,
    RevertBody,
    StartTurnBody,
    SteerAcceptedBody,
    SteerTurnBody,
    TurnAcceptedBody,
)
from openwork_core.daemon.validation import SessionIdPath, ToolCallIdPath, TurnIdPath
from openwork_core.daemon.views import input_chars, revert_body, turn_inputs
from openwork_core.session.errors import TurnNotActive

if TYPE_CHECKING:
    from openwork_core.service import OpenWorkCore


class InputTooLong(InvalidBody):
    """422 ``invalid_request``: the turn's text is over ``OPENWORK_MAX_INPUT_CHARS``."""

    def __init__(self, chars: int, cap: int) -> None:
        super().__init__(f"the turn's text has {chars} characters; the limit is {cap}")


def turns_routes(router: APIRouter, core: OpenWorkCore, *, max_input_chars: int) -> None:

    @router.post("/v1/sessions/{sid}/turns", status_code=202, response_model=TurnAcceptedBody)
    async def start_turn(sid: SessionIdPath, body: StartTurnBody) -> Response:
        chars = input_chars(body)
        if chars > max_input_chars:
            raise InputTooLong(chars, max_input_chars)
        accepted = await core.start_turn(
            sid,
            client_request_id=body.client_request_id,
            inputs=turn_inputs(body),
            disabled_skill_names=body.disabled_skill_names,
            model_name=body.model,
        )
        return JsonBytes({"turn_id": accepted.turn_id}, status_code=202)

    # GET /v1/sessions/{sid}/turns/{tid}: daemon/routes/history.py (issue 16)

    @router.post(
        "/v1/sessions/{sid}/turns/{tid}/steer", status_code=202, response_model=SteerAcceptedBody
    )
    async def steer_turn(sid: SessionIdPath, tid: TurnIdPath, body: SteerTurnBody) -> Response:
        """Issue 26 point 1: input for the running turn, committed before the 202."""
        chars = input_chars(body)
        if chars > max_input_chars:
            raise InputTooLong(chars, max_input_chars)
        try:
            accepted = await core.steer_turn(
                sid, tid, client_request_id=body.client_request_id, inputs=turn_inputs(body)
            )
        except TurnNotActive:
            await core.turn_view(sid, tid)  # an unknown turn is 404 not_found, not 409
            raise
        return JsonBytes(
            {"turn_id": accepted.turn_id, "steer_id": accepted.steer_id}, status_code=202
        )

    @router.post("/v1/sessions/{sid}/turns/{tid}/revert", response_model=RevertBody)
    async def revert_turn(sid: SessionIdPath, tid: TurnIdPath) -> RevertBody:
        """Issue 26 point 3: the Conversation drops this turn and every later one."""
        return revert_body(await core.reverts.revert(sid, tid))

    @router.post("/v1/sessions/{sid}/unrevert", response_model=RevertBody)
    async def unrevert(sid: SessionIdPath) -> RevertBody:
        """Issue 26 point 3: put back the last revert while no turn has started since."""
        return revert_body(await core.reverts.unrevert(sid))

    @router.post("/v1/sessions/{sid}/turns/{tid}/cancel", status_code=202)
    async def cancel_turn(sid: SessionIdPath, tid: TurnIdPath) -> Response:
        try:
            await core.cancel_turn(sid, tid)
        except TurnNotActive:
            await core.turn_view(sid, tid)  # an unknown turn is 404 not_found, not 409
            raise
        return JsonBytes({"turn_id": tid}, status_code=202)

    @router.post("/v1/sessions/{sid}/turns/{tid}/permissions/{tool_call_id}", status_code=202)
    async def resolve_permission(
        sid: SessionIdPath,
        tid: TurnIdPath,
        tool_call_id: ToolCallIdPath,
        body: PermissionDecisionBody,
    ) -> Response:
        try:
            await core.resolve_permission(sid, tid, tool_call_id, body.decision)
        except TurnNotActive:
            await core.turn_view(sid, tid)  # an unknown turn is 404 not_found, not 409
            raise
        return JsonBytes({"turn_id": tid, "tool_call_id": tool_call_id}, status_code=202)
