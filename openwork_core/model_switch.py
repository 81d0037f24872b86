"""Switching a session's model (issue 26 point 4): ``PATCH /v1/sessions/{sid}`` with
``provider`` / ``model``, and a turn body's ``model`` for that turn only — each validated as at
create (400 ``provider_not_found`` / ``model_not_found``).

The choice is stored, then effective from the next model call: a loaded session's actor hands
the resolved model to its running turn, which takes it at the top of its next model call (after
every tool result of the step in progress, never within a stream or a step) with the new
model's limits, compaction line and reservation; an idle or unloaded session resolves it when
its next turn starts. A turn's ``model`` (``GET …/turns/{tid}``) is the model of its latest
model call (its row's before the first). Provider-opaque reasoning goes back only to the
endpoint and model that produced it (``models/adapters/opaque.py``), so another model's is
dropped from its requests (model-providers.md §1)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from openwork_core.ids import SessionId, TurnId
from openwork_core.lazy_registry import LazyRegistry
from openwork_core.provider_runtime import ProviderRuntime
from openwork_core.session.errors import ActorStopped, NoProvider
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres.model_choice import set_session_model
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.postgres.usage import turn_model_calls
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
    def __init__(
        self, store: PostgresStore, providers: ProviderRuntime, sessions: LazyRegistry
    ) -> None:
        self._store = store
        self._providers = providers
        self._sessions = sessions

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
        handle = self._sessions.get(session_id)
        if handle is None:  # its next load and turn read the stored choice
            return
        chosen = dataclasses.replace(record, provider_id=provider, model_name=model)
        resolved = await (await self._sessions.registry()).resolve_model(chosen)
        try:
            await handle.switch_model(resolved)
        except ActorStopped:  # unloaded meanwhile: the stored choice is what counts
            return

    async def turn_model(self, session_id: SessionId, turn_id: TurnId) -> tuple[str, str] | None:
        """The provider and model a turn ran with: its latest model call's, its row's before
        the first call (a switch during the turn shows from the call that used it)."""
        try:
            turn = await self._store.get_turn(session_id, turn_id)
        except RecordNotFound:
            return None
        async with self._store.pool.acquire() as conn:
            calls = await turn_model_calls(conn, turn_id)
        if calls:
            return calls[-1].call.provider_id, calls[-1].call.model_name
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
