"""The HTTP + SSE application of daemon-api.md over OpenWorkCore: the routers per resource
(``daemon/routes/``), the one exception handler (``daemon/errors.py``) and the middleware.

Middleware, outermost first: the envelope (request id, unhandled → 500 ``internal_error``), the
security guards (token, Host, Origin: nothing is read before them), the body bound (413)."""

from __future__ import annotations

import asyncio

from fastapi import FastAPI

from openwork_core.config import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_INPUT_CHARS
from openwork_core.daemon.errors import ERROR_RESPONSES, install_error_handlers
from openwork_core.daemon.middleware import BodyLimitMiddleware, EnvelopeMiddleware
from openwork_core.daemon.openapi import install_openapi, operation_id
from openwork_core.daemon.routes.events import events_router
from openwork_core.daemon.routes.file_changes import file_changes_router
from openwork_core.daemon.routes.health import health_router
from openwork_core.daemon.routes.history import history_router
from openwork_core.daemon.routes.lifecycle import lifecycle_router
from openwork_core.daemon.routes.providers import providers_router
from openwork_core.daemon.routes.sessions import sessions_router
from openwork_core.daemon.routes.skills import skills_router
from openwork_core.daemon.routes.turns import turns_router
from openwork_core.daemon.routes.ui import ui_router
from openwork_core.daemon.security import SecurityMiddleware
from openwork_core.service import OpenWorkCore


def create_app(
    core: OpenWorkCore,
    *,
    token: str,
    allowed_origins: frozenset[str],
    allow_remote: bool,
    version: str,
    shutdown: asyncio.Event,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_input_chars: int = DEFAULT_MAX_INPUT_CHARS,
) -> FastAPI:
    app = FastAPI(
        title="OpenWork daemon",
        version=version,
        openapi_url="/v1/openapi.json",
        docs_url=None,
        redoc_url=None,
        responses=ERROR_RESPONSES,
        generate_unique_id_function=operation_id,
    )
    app.add_middleware(BodyLimitMiddleware, max_bytes=max_body_bytes)
    app.add_middleware(
        SecurityMiddleware,
        token=token,
        allowed_origins=allowed_origins,
        allow_remote=allow_remote,
    )
    app.add_middleware(EnvelopeMiddleware)
    install_error_handlers(app)
    app.include_router(health_router(core, version=version))
    app.include_router(providers_router(core))
    app.include_router(skills_router(core))
    app.include_router(sessions_router(core))
    app.include_router(turns_router(core, max_input_chars=max_input_chars))
    app.include_router(file_changes_router(core))
    app.include_router(events_router(core, shutdown=shutdown))
    app.include_router(lifecycle_router(core))
    app.include_router(history_router(core))
    app.include_router(ui_router(core))
    install_openapi(app)
    return app


_ANY_REQUEST = {"type": "http", "method": "GET", "path": "/", "root_path": "", "headers": []}


def prepare_routes(app: FastAPI) -> None:
    """Build every router's route contexts now: FastAPI builds them (a validator per parameter,
    body and response) at the router's first match, under its own lock, which the first request
    into each router would otherwise pay. Matching runs no endpoint; safe from any thread."""
    for route in app.router.routes:
        route.matches(dict(_ANY_REQUEST))
