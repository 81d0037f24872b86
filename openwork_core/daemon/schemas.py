"""Request and response bodies of daemon-api.md, as pydantic models (the OpenAPI document is
generated from these). Every request body derives from ``RequestModel`` (no unstorable text) and
bounds its strings, lists and integers (docs/reliability.md "Bounds")."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from openwork_core.daemon.validation import (
    BaseUrl,
    BodyId,
    ClientRequestIdBody,
    CompactionIdBody,
    Name,
    RequestModel,
    TokenCount,
)
from openwork_core.models.capabilities import ModelCapabilities
from openwork_core.storage.records import ProviderKind
from openwork_tools import SandboxMode


def _mode(value: object) -> object:
    return "accept_edits" if value == "accept-edits" else value


class CreateSessionBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    workspace: str = Field(min_length=1, max_length=4096)
    agent: Name = "default"
    provider: Name | None = "default"
    model: Name | None = None
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


class TextInputBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["text"]
    text: str


class SkillInputBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["skill"]
    name: str = Field(min_length=1, max_length=200)
    path: str = Field(min_length=1, max_length=4096)


InputBody = Annotated[TextInputBody | SkillInputBody, Field(discriminator="type")]


class StartTurnBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    client_request_id: ClientRequestIdBody
    input: list[InputBody] = Field(max_length=100)
    disabled_skill_names: list[Annotated[str, Field(max_length=200)]] = Field(
        default_factory=list, max_length=200
    )


class TurnAcceptedBody(BaseModel):
    turn_id: str


class TurnBody(BaseModel):
    turn_id: str
    status: Literal["running", "completed", "failed", "cancelled", "interrupted"]
    error_code: str | None
    message: str | None
    final_text: str | None
    model_calls: int


class PermissionModeBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    mode: SandboxMode

    _normalize_mode = field_validator("mode", mode="before")(_mode)


class CompactionBody(BaseModel):
    compaction_id: str
    before_tokens: int
    after_tokens: int


class RewindBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    compaction_id: CompactionIdBody


class PermissionDecisionBody(RequestModel):
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


class ProviderModelBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    name: Name
    context_window: TokenCount = 128_000
    max_output_tokens: TokenCount = 16_384
    max_reasoning_tokens: int = Field(default=0, ge=0, le=2**31 - 1)
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


class ProviderBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    id: str | None = Field(default=None, max_length=256)
    kind: ProviderKind
    base_url: BaseUrl | None = None
    api_key_env: str | None = Field(
        default=None, max_length=200, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$"
    )
    models: list[ProviderModelBody] = Field(default_factory=list, max_length=200)


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


class SkillStatusBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    disabled: bool


class FileChangesBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    change_ids: list[BodyId] = Field(min_length=1, max_length=500)


class AppliedChangeBody(BaseModel):
    change_id: str
    path: str
    undone: bool


class AppliedChangesBody(BaseModel):
    changes: list[AppliedChangeBody]
