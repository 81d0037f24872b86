"""Request and response bodies of daemon-api.md, as pydantic models (the OpenAPI document is
generated from these)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from openwork_core.ids import ClientRequestId, CompactionId
from openwork_core.models.capabilities import ModelCapabilities
from openwork_core.storage.records import ProviderKind
from openwork_tools import SandboxMode


def _mode(value: object) -> object:
    return "accept_edits" if value == "accept-edits" else value


class CreateSessionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    workspace: str = Field(min_length=1)
    agent: str = "default"
    provider: str | None = "default"
    model: str | None = None
    permission_mode: SandboxMode = SandboxMode.AUTO

    _normalize_mode = field_validator("permission_mode", mode="before")(_mode)


class SessionBody(BaseModel):
    session_id: str
    workspace: str
    agent: str
    provider: str | None
    model: str | None
    permission_mode: SandboxMode
    created_at: datetime


class SessionListItem(SessionBody):
    """A listed session with its activity (additions: ``title``, ``last_activity_at``,
    ``status``)."""

    title: str | None = None
    last_activity_at: datetime | None = None
    status: Literal["idle", "running"] = "idle"


class SessionWithSnapshot(SessionBody):
    snapshot: JsonValue


class SessionList(BaseModel):
    sessions: list[SessionListItem]


class TextInputBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["text"]
    text: str


class SkillInputBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["skill"]
    name: str = Field(min_length=1)
    path: str = Field(min_length=1)


InputBody = Annotated[TextInputBody | SkillInputBody, Field(discriminator="type")]


class StartTurnBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    client_request_id: ClientRequestId = Field(min_length=1, max_length=200)
    input: list[InputBody]
    disabled_skill_names: list[str] = Field(default_factory=list)


class TurnAcceptedBody(BaseModel):
    turn_id: str


class TurnBody(BaseModel):
    turn_id: str
    status: Literal["running", "completed", "failed", "cancelled", "interrupted"]
    error_code: str | None
    message: str | None
    final_text: str | None
    model_calls: int


class PermissionModeBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mode: SandboxMode

    _normalize_mode = field_validator("mode", mode="before")(_mode)


class CompactionBody(BaseModel):
    compaction_id: str
    before_tokens: int
    after_tokens: int


class RewindBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    compaction_id: CompactionId = Field(min_length=1)


class PermissionDecisionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    decision: Literal["allow_once", "deny"]


class MessageBody(BaseModel):
    message_id: str
    sequence: int
    turn_id: str | None
    role: str
    kind: str
    content: JsonValue
    created_at: datetime


class MessagePageBody(BaseModel):
    messages: list[MessageBody]
    has_more: bool
    next_after_sequence: int


class ProviderModelBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    context_window: int = Field(default=128_000, gt=0)
    max_output_tokens: int = Field(default=16_384, gt=0)
    max_reasoning_tokens: int = Field(default=0, ge=0)
    accepts_data_blocks: bool = True

    @model_validator(mode="after")
    def _reserve_fits_the_window(self) -> ProviderModelBody:
        """model-providers.md §4: output + reasoning must leave room in the window."""
        ModelCapabilities(
            context_window_tokens=self.context_window,
            max_output_tokens=self.max_output_tokens,
            max_reasoning_tokens=self.max_reasoning_tokens or None,
        )
        return self


class ProviderBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str | None = None
    kind: ProviderKind
    base_url: str | None = None
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    models: list[ProviderModelBody] = Field(default_factory=list)


class ProviderList(BaseModel):
    providers: list[ProviderBody]


class HealthBody(BaseModel):
    status: Literal["ok", "degraded"]
    version: str
    database: Literal["ok", "error"]


class SkillBody(BaseModel):
    source: Literal["agents"]
    name: str
    description: str
    path: str
    disabled: bool


class SkillWarningBody(BaseModel):
    path: str
    reason: str


class SkillListBody(BaseModel):
    skills: list[SkillBody]
    warnings: list[SkillWarningBody]


class SkillStatusBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    disabled: bool


class FileChangesBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    change_ids: list[str] = Field(min_length=1, max_length=500)


class AppliedChangeBody(BaseModel):
    change_id: str
    path: str
    undone: bool


class AppliedChangesBody(BaseModel):
    changes: list[AppliedChangeBody]
