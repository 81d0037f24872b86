"""Provider routes (daemon-api.md §3: GET /v1/providers, PUT /v1/providers/{id})."""

from __future__ import annotations

from fastapi import APIRouter

from openwork_core.daemon.errors import InvalidBody
from openwork_core.daemon.schemas import ProviderBody, ProviderList
from openwork_core.daemon.validation import MAX_ID_CHARS, StorableStr
from openwork_core.daemon.views import provider_body, provider_record
from openwork_core.service import OpenWorkCore


class InvalidProviderId(InvalidBody):
    """422 ``invalid_request``: a provider id is non-blank, bounded and has no '/'."""

    def __init__(self, provider_id: str) -> None:
        super().__init__(f"invalid provider id: {provider_id[:80]!r} (non-blank, no '/')")


def providers_router(core: OpenWorkCore) -> APIRouter:
    router = APIRouter()

    @router.get("/v1/providers", response_model=ProviderList)
    async def list_providers() -> ProviderList:
        return ProviderList(providers=[provider_body(p) for p in await core.list_providers()])

    @router.put("/v1/providers/{provider_id}", response_model=ProviderBody)
    async def put_provider(provider_id: StorableStr, body: ProviderBody) -> ProviderBody:
        if "/" in provider_id or not provider_id.strip() or len(provider_id) > MAX_ID_CHARS:
            raise InvalidProviderId(provider_id)
        return provider_body(await core.put_provider(provider_record(provider_id, body)))

    return router
