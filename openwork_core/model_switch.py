"""Switching a session's model (issue 26 point 4): ``PATCH /v1/sessions/{sid}`` with
``provider`` / ``model``, and a turn body's ``model`` for that turn only — each validated as at
create (400 ``provider_not_found`` / ``model_not_found``).

The choice is resolved when a turn starts (``TurnSpec.model``): its limits, compaction line and
reservation are the new model's from the first model call of the next turn; a running turn keeps
the model it started with. Provider-opaque reasoning goes back only to the endpoint and model
that produced it (``models/adapters/opaque.py``), so another model's is dropped from its
requests (model-providers.md §1)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from openwork_core.ids import SessionId, TurnId
from openwork_core.provider_runtime import ProviderRuntime
from openwork_core.session.errors import NoProvider
from openwork_core.storage import PostgresStore
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres.model_choice import set_session_model
from openwork_core.storage.records import SessionRecord


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelChoice:
    """What a ``PATCH`` named: ``provider`` / ``model`` given or not (``model: null`` is the
    provider's default model)."""

    provider: str | None = None
    model: str | None = None
    provider_given: bool = False
    model_given: bool = False

    @property
    def empty(self) -> bool:
        return not (self.provider_given or self.model_given)


class ModelSwitch:
    def __init__(self, store: PostgresStore, providers: ProviderRuntime) -> None:
        self._store = store
        self._providers = providers

    async def switch(self, session_id: SessionId, choice: ModelChoice) -> None:
        """Validate and store the session's new provider and model. A provider named alone
        takes its default model; a model named alone stays with the session's provider."""
        record = await self._store.get_session(session_id)
        provider = choice.provider if choice.provider_given else record.provider_id
        if provider is None:
            raise NoProvider("the session has no model provider; name one")
        if choice.model_given:
            model = choice.model
        else:
            model = record.model_name if provider == record.provider_id else None
        await self._providers.check_choice(provider, model)
        async with self._store.pool.acquire() as conn:
            await set_session_model(conn, session_id, provider, model)

    async def turn_model(self, session_id: SessionId, turn_id: TurnId) -> tuple[str, str] | None:
        """The provider and model a turn ran with, as its row keeps them."""
        try:
            turn = await self._store.get_turn(session_id, turn_id)
        except RecordNotFound:
            return None
        return turn.resolved_provider_id, turn.resolved_model_name

    async def for_turn(self, record: SessionRecord, model: str | None) -> SessionRecord:
        """The session as one turn sees it: ``model`` (of the session's provider) for this turn
        only, validated; ``None`` keeps the session's."""
        if model is None:
            return record
        if record.provider_id is None:
            raise NoProvider("the session has no model provider")
        await self._providers.check_choice(record.provider_id, model)
        return dataclasses.replace(record, model_name=model)
