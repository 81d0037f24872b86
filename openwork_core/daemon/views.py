"""Domain records → response bodies of daemon-api.md (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson
from pydantic import JsonValue

from openwork_core.daemon.schemas import (
    AppliedChangeBody,
    ChangeRefusalBody,
    CompactionBody,
    MessageBody,
    ModelWarningBody,
    ProviderBody,
    ProviderModelBody,
    ProviderSettingsBody,
    RevertBody,
    ServedBody,
    SessionBody,
    SkillBody,
    SkillListBody,
    SkillWarningBody,
    StartTurnBody,
    SteerTurnBody,
    TextInputBody,
)
from openwork_core.session.input import SkillInput, TextInput, UserInput
from openwork_core.storage.records import (
    ProviderModel,
    ProviderRecord,
    SessionRecord,
    StoredMessage,
)

if TYPE_CHECKING:
    from openwork_core.models.served_window import ServedWindow
    from openwork_core.provider_runtime import ProviderRuntime
    from openwork_core.session.compaction.run import CompactionResult
    from openwork_core.session.revert import RevertResult
    from openwork_core.skills.enablement import SkillListing


def session_body(record: SessionRecord) -> SessionBody:
    return SessionBody(
        session_id=record.id,
        workspace=record.working_directory,
        agent=record.agent,
        provider=record.provider_id,
        model=record.model_name,
        permission_mode=record.sandbox_mode,
        created_at=record.created_at,
    )


def _served_body(served: ServedWindow | None) -> ServedBody | None:
    if served is None:
        return None
    return ServedBody(
        server=served.server,
        context_window=served.tokens,
        supports_tools=served.supports_tools,
        probed_at=served.probed_at,
    )


def provider_body(
    provider: ProviderRecord, *, has_key: bool = False, runtime: ProviderRuntime | None = None
) -> ProviderBody:
    """``runtime``: adds each model's ``served`` and ``warnings`` (issue 24 point 4)."""

    def model_body(m: ProviderModel) -> ProviderModelBody:
        served = None if runtime is None else runtime.served_window(provider.id, m.name)
        warnings = [] if runtime is None else runtime.model_warnings(provider, m)
        return ProviderModelBody(
            name=m.name,
            context_window=m.context_window,
            max_output_tokens=m.max_output_tokens,
            max_reasoning_tokens=m.max_reasoning_tokens,
            accepts_data_blocks=m.accepts_data_blocks,
            served=_served_body(served),
            warnings=[ModelWarningBody(code=w.code, message=w.message) for w in warnings],
        )

    return ProviderBody(
        id=provider.id,
        kind=provider.kind,
        base_url=provider.base_url,
        api_key_env=provider.api_key_env,
        models=[model_body(m) for m in provider.models],
        settings=ProviderSettingsBody.of(provider.settings),
        has_key=has_key,
    )


def provider_record(provider_id: str, body: ProviderBody) -> ProviderRecord:
    return ProviderRecord(
        id=provider_id,
        kind=body.kind,
        base_url=body.base_url,
        api_key_env=body.api_key_env,
        models=tuple(m.record() for m in body.models),
        settings=body.settings.record(),
    )


def skill_list(listing: SkillListing) -> SkillListBody:
    return SkillListBody(
        skills=[
            SkillBody(
                source=s.source,
                name=s.name,
                description=s.description,
                path=s.path,
                disabled=s.disabled,
            )
            for s in listing.skills
        ],
        warnings=[SkillWarningBody(path=w.path, reason=w.reason) for w in listing.warnings],
    )


def message_json(message: StoredMessage) -> JsonValue:
    return MessageBody(
        message_id=message.id,
        sequence=message.sequence,
        turn_id=message.turn_id,
        role=message.role.value,
        kind=message.kind.value,
        content=orjson.loads(message.content),
        created_at=message.created_at,
    ).model_dump(mode="json", by_alias=True)


def compaction_body(result: CompactionResult) -> CompactionBody:
    return CompactionBody(
        compaction_id=result.compaction_id,
        before_tokens=result.before_tokens,
        after_tokens=result.after_tokens,
    )


def turn_inputs(body: StartTurnBody | SteerTurnBody) -> list[UserInput]:
    return [
        TextInput(text=part.text)
        if isinstance(part, TextInputBody)
        else SkillInput(name=part.name, path=part.path)
        for part in body.input
    ]


def input_chars(body: StartTurnBody | SteerTurnBody) -> int:
    """The characters of the turn's text parts (the cap of ``OPENWORK_MAX_INPUT_CHARS``)."""
    return sum(len(part.text) for part in body.input if isinstance(part, TextInputBody))


def revert_body(result: RevertResult) -> RevertBody:
    return RevertBody(
        turn_ids=list(result.turn_ids),
        changes=[
            AppliedChangeBody(change_id=c.change_id, path=c.path, undone=c.undone)
            for c in result.changes
        ],
        conflicts=[
            ChangeRefusalBody(change_id=c.change_id, code=c.code, message=c.message)
            for c in result.conflicts
        ],
    )
