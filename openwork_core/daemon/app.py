"""The HTTP + SSE application of daemon-api.md over OpenWorkCore: the routers per resource
(``daemon/routes/``), the one exception handler (``daemon/errors.py``) and the middleware.

Middleware, outermost first: the envelope (request id, unhandled → 500 ``internal_error``), the
security guards (token, Host, Origin: nothing is read before them), the body bound (413)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from fastapi import FastAPI

from openwork_core.config import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_INPUT_CHARS
from openwork_core.daemon.errors import install_error_handlers
from openwork_core.daemon.middleware import BodyLimitMiddleware, EnvelopeMiddleware
from openwork_core.daemon.openapi import install_openapi, operation_id
from openwork_core.daemon.routes.events import events_routes
from openwork_core.daemon.routes.file_changes import file_changes_routes
from openwork_core.daemon.routes.files import files_routes
from openwork_core.daemon.routes.health import health_routes
from openwork_core.daemon.routes.history import history_routes
from openwork_core.daemon.routes.lifecycle import lifecycle_routes
from openwork_core.daemon.routes.mcp import mcp_routes
from openwork_core.daemon.routes.providers import DaemonFacts, providers_routes
from openwork_core.daemon.routes.sessions import sessions_routes
from openwork_core.daemon.routes.skills import skills_routes
from openwork_core.daemon.routes.turns import turns_routes
from openwork_core.daemon.routes.ui import ui_routes
from openwork_core.daemon.security import SecurityMiddleware

if TYPE_CHECKING:
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
    facts: DaemonFacts | None = None,
) -> FastAPI:
    app = FastAPI(
        title="OpenWork daemon",
        version=version,
        openapi_url="/v1/openapi.json",
        docs_url=None,
        redoc_url=None,
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
    # on the app's own router, not included: FastAPI builds an included router's routes a
    # second time, at its first match (a second set of validators, paid by a first request)
    routes = app.router
    health_routes(routes, core, version=version)
    providers_routes(routes, core, version=version, facts=facts)
    mcp_routes(routes, core)
    skills_routes(routes, core)
    sessions_routes(routes, core)
    turns_routes(routes, core, max_input_chars=max_input_chars)
    file_changes_routes(routes, core)
    files_routes(routes, core)
    events_routes(routes, core, shutdown=shutdown)
    lifecycle_routes(routes, core)
    history_routes(routes, core)
    ui_routes(routes, core)
    install_openapi(app)
    return app
