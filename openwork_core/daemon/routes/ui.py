"""The context page (issue 16 point 4, issue 25 point 7): ``GET /ui/`` serves the static page
shipped in the package (no build step, no CDN; the page's own requests carry the bearer token),
and ``GET /v1/sessions/{sid}/context/overview`` gives it the model, the window bar, the World
State sections, the largest items, each region's items, the usage and the warnings."""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING

from fastapi import APIRouter
from starlette.responses import RedirectResponse, Response

from openwork_core.daemon.desktop_schemas import ContextOverviewBody
from openwork_core.daemon.validation import SessionIdPath
from openwork_core.storage.errors import RecordNotFound

if TYPE_CHECKING:
    from openwork_core.desktop.context_overview import ContextOverview
    from openwork_core.service import OpenWorkCore

UI_PREFIX = "/ui"
_ASSETS = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def _asset(name: str) -> Response:
    body = files("openwork_core.daemon").joinpath("ui", name).read_bytes()
    return Response(
        body,
        media_type=_ASSETS[name],
        headers={
            "Content-Security-Policy": CONTENT_SECURITY_POLICY,
            "Cache-Control": "no-cache",
            "Referrer-Policy": "no-referrer",
            "X-Content-Type-Options": "nosniff",
        },
    )


def overview_body(overview: ContextOverview) -> ContextOverviewBody:
    """The dataclasses as they are: the body's fields are theirs, name for name."""
    return ContextOverviewBody.model_validate(overview, from_attributes=True)


def ui_routes(router: APIRouter, core: OpenWorkCore) -> None:

    @router.get(UI_PREFIX, include_in_schema=False)
    async def ui_redirect() -> Response:
        return RedirectResponse(f"{UI_PREFIX}/", status_code=308)

    @router.get(f"{UI_PREFIX}/", include_in_schema=False)
    async def ui_index() -> Response:
        return _asset("index.html")

    @router.get(f"{UI_PREFIX}/{{name}}", include_in_schema=False)
    async def ui_asset(name: str) -> Response:
        if name not in _ASSETS:
            raise RecordNotFound(f"no such page asset: {name}")
        return _asset(name)

    @router.get(
        "/v1/sessions/{sid}/context/overview", response_model=ContextOverviewBody, tags=["context"]
    )
    async def get_context_overview(sid: SessionIdPath) -> ContextOverviewBody:
        overview = await core.context_overview(sid)
        return overview_body(overview)
