"""Provider routes (daemon-api.md §3: GET /v1/providers, PUT /v1/providers/{id}) and the
daemon's own diagnostics (``GET /v1/diagnostics``, issue 24 point 5: what ``openwork doctor``
asks a running daemon)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fastapi import APIRouter

from openwork_core.daemon.errors import InvalidBody
from openwork_core.daemon.schemas import DiagnosticsBody, ProviderBody, ProviderList, database_state
from openwork_core.daemon.validation import MAX_ID_CHARS, StorableStr
from openwork_core.daemon.views import provider_body, provider_record
from openwork_core.provider_runtime import KeyUpdate
from openwork_core.storage.records import ProviderRecord

if TYPE_CHECKING:
    from openwork_core.service import OpenWorkCore


class InvalidProviderId(InvalidBody):
    """422 ``invalid_request``: a provider id is non-blank, bounded and has no '/'."""

    def __init__(self, provider_id: str) -> None:
        super().__init__(f"invalid provider id: {provider_id[:80]!r} (non-blank, no '/')")


@dataclass(frozen=True, slots=True, kw_only=True)
class DaemonFacts:
    """What the daemon was started with, for ``GET /v1/diagnostics``."""

    database_location: str = "unknown"
    config_file: str | None = None
    settings: Mapping[str, str] = field(default_factory=dict)
    """Every setting by its environment name, secrets masked (``config.masked_settings``)."""


def providers_routes(
    router: APIRouter, core: OpenWorkCore, *, version: str, facts: DaemonFacts | None = None
) -> None:
    known = facts or DaemonFacts()

    @router.get("/v1/diagnostics", response_model=DiagnosticsBody)
    async def diagnostics() -> DiagnosticsBody:
        sandbox = core.sandbox_status
        return DiagnosticsBody(
            version=version,
            database=database_state(await core.database_ok()),
            database_location=known.database_location,
            sandbox_available=sandbox.available,
            sandbox_reason=sandbox.reason,
            config_file=known.config_file,
            settings=dict(known.settings),
        )

    def view(provider: ProviderRecord) -> ProviderBody:
        return provider_body(
            provider, has_key=core.providers.has_key(provider), runtime=core.providers
        )

    @router.get(
        "/v1/providers",
        response_model=ProviderList,
        response_model_exclude={"providers": {"__all__": {"api_key"}}},
    )
    async def list_providers() -> ProviderList:
        return ProviderList(providers=[view(p) for p in await core.list_providers()])

    @router.put(
        "/v1/providers/{provider_id}",
        response_model=ProviderBody,
        response_model_exclude={"api_key"},
    )
    async def put_provider(provider_id: StorableStr, body: ProviderBody) -> ProviderBody:
        """``api_key``: a string stores or rotates the runtime key, ``null`` deletes it, absent
        keeps it (docs/api.md)."""
        if "/" in provider_id or not provider_id.strip() or len(provider_id) > MAX_ID_CHARS:
            raise InvalidProviderId(provider_id)
        key = KeyUpdate(body.api_key) if "api_key" in body.model_fields_set else None
        return view(await core.put_provider(provider_record(provider_id, body), key))
