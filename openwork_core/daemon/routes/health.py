"""GET /v1/health (daemon-api.md §3): public, 503 while the database does not answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter
from starlette.responses import Response

from openwork_core.daemon.errors import JsonBytes
from openwork_core.daemon.schemas import HealthBody

if TYPE_CHECKING:
    from openwork_core.service import OpenWorkCore


def health_routes(router: APIRouter, core: OpenWorkCore, *, version: str) -> None:

    @router.get("/v1/health", response_model=HealthBody)
    async def health() -> Response:
        database = "ok" if await core.database_ok() else "error"
        body = HealthBody(
            status="ok" if database == "ok" else "degraded", version=version, database=database
        )
        return JsonBytes(body.model_dump(), status_code=200 if database == "ok" else 503)
