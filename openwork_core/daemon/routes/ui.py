"""The context page (issue 16 point 4): ``GET /ui/`` serves the static page shipped in the
package (no build step, no CDN; the page's own requests carry the bearer token), and
``GET /v1/sessions/{sid}/context/overview`` gives it the window bar, the World State sections
and the largest items of the inspection."""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING

from fastapi import APIRouter
from starlette.responses import RedirectResponse, Response

from openwork_core.daemon.desktop_schemas import (
    BarSegmentBody,
    ContextOverviewBody,
    LargestItemBody,
    WindowBarBody,
    WorldStateEntryBody,
)
from openwork_core.daemon.schemas import ModelWarningBody
from openwork_core.ids import SessionId
from openwork_core.session.errors import NoProvider
from openwork_core.storage import RecordNotFound

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


async def session_warnings(core: OpenWorkCore, sid: SessionId) -> list[ModelWarningBody]:
    """The session's model warnings (what its server said), then its latest turn's."""
    found: dict[str, str] = {}
    try:
        model = await core.resolve_model(await core.get_session(sid))
    except NoProvider:
        pass
    else:
        for warning in core.providers.model_warnings(model.provider, model.model):
            found.setdefault(warning.code.value, warning.message)
    latest = (await core.desktop.turns(sid, None, 1)).turns
    if latest:
        for stored in await core.store.turn_warnings(latest[0].turn_id):
            found.setdefault(stored.code, stored.message)
    return [ModelWarningBody(code=code, message=message) for code, message in found.items()]


def overview_body(
    overview: ContextOverview, warnings: list[ModelWarningBody] | None = None
) -> ContextOverviewBody:
    bar = overview.bar
    return ContextOverviewBody(
        bar=WindowBarBody(
            context_window=bar.context_window,
            segments=[BarSegmentBody(region=s.region.value, tokens=s.tokens) for s in bar.segments],
            auto_compact_input_tokens=bar.auto_compact_input_tokens,
            auto_compact_percent=bar.auto_compact_percent,
        ),
        world_state=[
            WorldStateEntryBody(
                section=w.section,
                form=w.form,
                tokens=w.tokens,
                message_id=w.message_id,
                sequence=w.sequence,
                index=w.index,
            )
            for w in overview.world_state
        ],
        largest=[
            LargestItemBody(
                region=i.region.value,
                index=i.index,
                tokens=i.tokens,
                label=i.label,
                message_id=i.message_id,
                sequence=i.sequence,
                preview=i.preview,
            )
            for i in overview.largest
        ],
        warnings=warnings or [],
    )


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
    async def get_context_overview(sid: SessionId) -> ContextOverviewBody:
        overview = await core.context_overview(sid)
        return overview_body(overview, await session_warnings(core, sid))
