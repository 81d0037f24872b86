"""The providers at run time (issue 14 points 6–8): their keys (the runtime key file, else the
environment variable), the windows their servers really serve (probed in the background after
start and after every PUT; never on the start path), and the check of a new session's provider
and model. ``OpenWorkCore`` owns one; the registry asks it for keys and served windows."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog

from openwork_core.models.capabilities import resolve_capabilities
from openwork_core.models.served_window import ServedWindow
from openwork_core.models.warnings import ModelWarning, served_window_smaller, tools_unsupported
from openwork_core.models.window_probe import probe_served_window, probes_window
from openwork_core.session.errors import ModelNotFound, ProviderNotFound
from openwork_core.session.registry_settings import environment_key
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.provider_keys import ProviderKeys
from openwork_core.storage.records import ProviderModel, ProviderRecord

log = structlog.get_logger(__name__)

WindowProber = Callable[[str, str], Awaitable[ServedWindow | None]]
STARTUP_TASK = "provider-startup"
"""The name of the task that loads the key file and starts every provider's probe."""


def probe_task_name(provider_id: str) -> str:
    """The name of a provider's current window-probe task (nothing in the daemon waits for it)."""
    return f"window-probe-{provider_id}"


@dataclass(frozen=True, slots=True)
class KeyUpdate:
    """A PUT's ``api_key``: a new key, or ``None`` to delete the stored one."""

    key: str | None


async def _probe(base_url: str, model: str) -> ServedWindow | None:
    return await probe_served_window(base_url, model)


class ProviderRuntime:
    def __init__(
        self, store: PostgresStore, keys: ProviderKeys, prober: WindowProber = _probe
    ) -> None:
        self._store = store
        self._keys = keys
        self._prober = prober
        self._served: dict[tuple[str, str], ServedWindow] = {}
        self._probes: dict[str, asyncio.Task[None]] = {}
        self._startup: asyncio.Task[None] | None = None

    # -- keys ----------------------------------------------------------------------------------
    def api_key(self, provider: ProviderRecord) -> str | None:
        """The runtime key wins over the environment variable (read at every resolution, so a
        rotation needs no restart)."""
        return self._keys.get(provider.id) or environment_key(provider)

    def has_key(self, provider: ProviderRecord) -> bool:
        return self.api_key(provider) is not None

    # -- served windows ------------------------------------------------------------------------
    def served_window(self, provider_id: str, model: str) -> ServedWindow | None:
        return self._served.get((provider_id, model))

    def model_warnings(self, provider: ProviderRecord, model: ProviderModel) -> list[ModelWarning]:
        """What the server's answers say the user should change (issue 24 point 4):
        ``tools_unsupported``, ``served_window_smaller`` (below a configured or catalog
        window; a fallback window was never the user's)."""
        served = self._served.get((provider.id, model.name))
        if served is None:
            return []
        warnings: list[ModelWarning] = []
        if served.supports_tools is False:
            warnings.append(tools_unsupported(served.server, model.name))
        unlimited = resolve_capabilities(model, provider.settings)
        window = unlimited.capabilities.context_window_tokens
        if served.tokens < window and unlimited.source != "fallback":
            warnings.append(served_window_smaller(served.server, served.tokens, window))
        return warnings

    def start(self) -> None:
        """Load the key file and probe every provider, in the background."""
        self._startup = asyncio.get_running_loop().create_task(self._start(), name=STARTUP_TASK)

    async def _start(self) -> None:
        await asyncio.to_thread(self._keys.load)
        try:
            providers = await self._store.list_providers()
        except Exception as exc:  # the probe is an optimisation: never fatal
            log.warning("window_probe.skipped", error=str(exc))
            return
        for provider in providers:
            self.probe(provider)

    def probe(self, provider: ProviderRecord) -> None:
        """(Re)start the provider's probe; its results replace the previous ones on arrival."""
        previous = self._probes.pop(provider.id, None)
        if previous is not None:
            previous.cancel()
        for key in [k for k in self._served if k[0] == provider.id]:
            del self._served[key]
        if probes_window(provider):
            self._probes[provider.id] = asyncio.get_running_loop().create_task(
                self._probe_models(provider), name=probe_task_name(provider.id)
            )

    async def _probe_models(self, provider: ProviderRecord) -> None:
        assert provider.base_url is not None
        for model in provider.models:
            try:
                served = await self._prober(provider.base_url, model.name)
            except Exception as exc:  # a probe never fails anything
                log.warning("window_probe.failed", provider=provider.id, error=repr(exc))
                continue
            if served is None:
                continue
            self._served[(provider.id, model.name)] = served
            log.info(
                "window_probe.served",
                provider=provider.id,
                model=model.name,
                server=served.server,
                tokens=served.tokens,
                supports_tools=served.supports_tools,
            )
            for warning in self.model_warnings(provider, model):
                log.warning(
                    "provider.model_warning",
                    provider=provider.id,
                    model=model.name,
                    code=warning.code.value,
                    message=warning.message,
                )

    async def close(self) -> None:
        tasks = [t for t in (self._startup, *self._probes.values()) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- writes and checks ---------------------------------------------------------------------
    async def put(self, record: ProviderRecord, key: KeyUpdate | None) -> ProviderRecord:
        """The row first (PostgreSQL), then the key file (a 0600 rename), then a new probe."""
        stored = await self._store.upsert_provider(record)
        if key is not None:
            await asyncio.to_thread(self._keys.set, stored.id, key.key)
        self.probe(stored)
        return stored

    async def check_choice(self, provider_id: str, model: str | None) -> None:
        """A new session's named provider exists and lists its model (a provider listing no
        models takes any name: the catalog, the served window or the fallback size it)."""
        try:
            provider = await self._store.get_provider(provider_id)
        except RecordNotFound as exc:
            raise ProviderNotFound(provider_id) from exc
        listed = tuple(m.name for m in provider.models)
        if model is None and not listed:
            raise ModelNotFound(provider_id, model, listed)
        if model is not None and listed and model not in listed:
            raise ModelNotFound(provider_id, model, listed)
