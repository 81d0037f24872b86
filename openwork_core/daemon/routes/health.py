"""GET /v1/health (daemon-api.md §3): public, 503 while the database does not answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter
from starlette.responses import Response

from openwork_core.daemon.errors import JsonBytes
from openwork_core.daemon.schemas import DatabaseState, HealthBody, HealthStatus, database_state

if TYPE_CHECKING:
    from openwork_core.service import OpenWorkCore


def health_routes(router: APIRouter, core: OpenWorkCore, *, version: str) -> None:

    @router.get("/v1/health", response_model=HealthBody)
    async def health() -> Response:
        database = database_state(await core.database_ok())
        ok = database is DatabaseState.OK
        body = HealthBody(
            status=HealthStatus.OK if ok else HealthStatus.DEGRADED,
            version=version,
            database=database,
        )
        return JsonBytes(body.model_dump(), status_code=200 if ok else 503)
