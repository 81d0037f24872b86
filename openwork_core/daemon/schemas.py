"""Request and response bodies of daemon-api.md, as pydantic models (the OpenAPI document is
generated from these). Every request body derives from ``RequestModel`` (no unstorable text) and
bounds its strings, lists and integers (docs/reliability.md "Bounds")."""

from __future__ import annotations

import dataclasses
import enum
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BeforeValidator, ConfigDict, Field, WithJsonSchema, model_validator

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import (
    DataBlock,
    ProviderOpaqueBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolOutputBlock,
    ToolResultState,
)
from openwork_core.body import Body, RequestModel
from openwork_core.daemon.errors import SOMETIMES
from openwork_core.daemon.validation import (
    BaseUrl,
    BodyId,
    ClientRequestIdBody,
    CompactionIdBody,
    Name,
    TokenCount,
)
from openwork_core.models.capabilities import resolve_capabilities
from openwork_core.models.warnings import WarningCode
from openwork_core.session.approval import PermissionDecision
from openwork_core.storage.records import (
    MaxTokensField,
    ProviderKind,
    ProviderModel,
    ProviderSettings,
    ReasoningEffort,
    TurnStatus,
)
from openwork_tools.modes import SandboxMode
from openwork_tools.results import FileChange


def _mode(value: object) -> object:
    return "accept_edits" if value == "accept-edits" else value


AcceptedMode = Annotated[
    SandboxMode,
    BeforeValidator(_mode),
    WithJsonSchema(
        {"type": "string", "enum": [*SandboxMode, "accept-edits"], "title": "AcceptedSandboxMode"},
        mode="validation",
    ),
]
"""A mode in a request: a ``SandboxMode``, or ``accept-edits`` (the World State's spelling)."""


class CreateSessionBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    workspace: str = Field(min_length=1, max_length=4096)
    agent: Name = "default"
    provider: Name | None = "default"
    model: Name | None = None
    permission_mode: AcceptedMode = SandboxMode.AUTO


class ForkSessionBody(RequestModel):
    """Issue 26 point 2: fork through the end of a finished turn (default: the last one)."""

    model_config = ConfigDict(extra="forbid")
    after_sequence: int | None = Field(
        default=None,
        ge=0,
        description="the last message sequence the fork copies: 0, or a finished turn's last",
    )


class SessionBody(Body):
    session_id: str
    workspace: str
    agent: str
    provider: str | None
    model: str | None
    permission_mode: SandboxMode
    created_at: datetime


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
    model: Name | None = Field(
        default=None, description="a model of the session's provider for this turn only"
    )


class TurnAcceptedBody(Body):
    turn_id: str


class SteerTurnBody(RequestModel):
    """Input for the running turn (issue 26 point 1): the turn body's input forms."""

    model_config = ConfigDict(extra="forbid")
    client_request_id: ClientRequestIdBody
    input: list[InputBody] = Field(max_length=100)


class SteerAcceptedBody(Body):
    turn_id: str
    steer_id: str


class TurnBody(Body):
    turn_id: str
    status: TurnStatus
    error_code: str | None
    message: str | None
    final_text: str | None
    model_calls: int


class PermissionModeBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    mode: AcceptedMode


class CompactionBody(Body):
    compaction_id: str
    before_tokens: int
    after_tokens: int


class RewindBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    compaction_id: CompactionIdBody


class PermissionDecisionBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    decision: PermissionDecision


class StoredToolResultBlock(Body):
    """A tool result as stored: the Chat State block and, beside it, the ``file_change``
    artifacts of the call (camelCase, tools.md §8; left out when there are none)."""

    type: Literal["tool_result"]
    id: str
    name: str
    output: list[ToolOutputBlock]
    state: ToolResultState
    artifacts: list[FileChange] | None = Field(default=None, json_schema_extra=SOMETIMES)


StoredBlock = Annotated[
    TextBlock
    | ThinkingBlock
    | DataBlock
    | ToolCallBlock
    | StoredToolResultBlock
    | ProviderOpaqueBlock,
    Field(discriminator="type"),
]
"""A stored content block: a tool call's ``input`` is the model's argument text as sent (the
stored and measured form, the same as in the context inspection)."""


class MessageBody(Body):
    message_id: str
    sequence: int
    turn_id: str | None
    role: Role
    kind: MessageKind
    content: list[StoredBlock]
    created_at: datetime


class MessagePageBody(Body):
    messages: list[MessageBody]
    has_more: bool
    next_after_sequence: int


class ServedBody(Body):
    """What the model's server said it serves (issue 24 point 4): ``server`` is llama.cpp,
    ollama, lm-studio or vllm; ``supports_tools`` null where the server does not say."""

    server: str
    context_window: int
    supports_tools: bool | None
    probed_at: datetime


class ModelWarningBody(Body):
    """A warning the user is shown (issue 24 point 4): ``message`` says what to change."""

    code: WarningCode
    message: str


class ProviderModelBody(RequestModel):
    """A model of the provider; numbers left out (null) come from the built-in catalog (or the
    fallback) — docs/providers.md "The window". ``served`` and ``warnings`` are read-only: what
    the server's own answers say (null / empty where it was not asked or does not say)."""

    model_config = ConfigDict(extra="forbid")
    name: Name
    context_window: TokenCount | None = None
    max_output_tokens: TokenCount | None = None
    max_reasoning_tokens: int = Field(default=0, ge=0, le=2**31 - 1)
    accepts_data_blocks: bool | None = None
    served: ServedBody | None = Field(default=None, json_schema_extra={"readOnly": True})
    warnings: list[ModelWarningBody] = Field(
        default_factory=list, json_schema_extra={"readOnly": True}
    )

    def record(self) -> ProviderModel:
        return ProviderModel(**self.model_dump(exclude={"served", "warnings"}))


class ProviderSettingsBody(RequestModel):
    """``ProviderSettings`` (docs/providers.md "Settings"); every field optional."""

    model_config = ConfigDict(extra="forbid")
    idle_timeout_s: float = Field(default=120.0, gt=0, le=3600)
    total_timeout_s: float = Field(default=1800.0, gt=0, le=86_400)
    max_retries: int = Field(default=2, ge=0, le=10)
    context_window: TokenCount | None = None
    max_output_tokens: TokenCount | None = None
    max_tokens_field: MaxTokensField = "max_tokens"
    stream_usage: bool = True
    reasoning_effort: ReasoningEffort | None = None
    probe_served_window: bool = True

    def record(self) -> ProviderSettings:
        return ProviderSettings(**self.model_dump())

    @classmethod
    def of(cls, settings: ProviderSettings) -> ProviderSettingsBody:
        return cls(**dataclasses.asdict(settings))


class ProviderBody(RequestModel):
    """A provider. ``api_key`` is write-only: a string stores (or rotates) the key in the
    daemon's 0600 key file, ``null`` deletes it, absent leaves it; it is never returned —
    ``has_key`` (read-only) says whether the daemon has a key for the provider."""

    model_config = ConfigDict(extra="forbid")
    id: str | None = Field(default=None, max_length=256)
    kind: ProviderKind
    base_url: BaseUrl | None = None
    api_key_env: str | None = Field(
        default=None, max_length=200, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$"
    )
    models: list[ProviderModelBody] = Field(default_factory=list, max_length=200)
    settings: ProviderSettingsBody = Field(default_factory=ProviderSettingsBody)
    api_key: str | None = Field(
        default=None,
        min_length=1,
        max_length=4096,
        pattern=r"^[\x21-\x7e]+$",
        json_schema_extra={"writeOnly": True},
    )
    has_key: bool = Field(default=False, json_schema_extra={"readOnly": True})

    @model_validator(mode="after")
    def _reserve_fits_the_window(self) -> ProviderBody:
        """model-providers.md §4: output + reasoning must leave room in the window, with the
        numbers each model will really get (settings, its row, the catalog)."""
        settings = self.settings.record()
        for model in self.models:
            resolve_capabilities(model.record(), settings)
        return self


class ProviderList(Body):
    providers: list[ProviderBody]


class DatabaseState(enum.StrEnum):
    OK = "ok"
    ERROR = "error"


def database_state(answers: bool) -> DatabaseState:
    return DatabaseState.OK if answers else DatabaseState.ERROR


class HealthStatus(enum.StrEnum):
    OK = "ok"
    DEGRADED = "degraded"


class DiagnosticsBody(Body):
    """``GET /v1/diagnostics`` (issue 24 point 5): what ``openwork doctor`` asks the running
    daemon — its own database, sandbox verdict and effective settings (secrets masked)."""

    version: str
    database: Literal[DatabaseState.OK, DatabaseState.ERROR]
    database_location: str
    sandbox_available: bool
    sandbox_reason: str | None
    config_file: str | None
    settings: dict[str, str]


class HealthBody(Body):
    status: Literal[HealthStatus.OK, HealthStatus.DEGRADED]
    version: str
    database: Literal[DatabaseState.OK, DatabaseState.ERROR]


class SkillBody(Body):
    source: Literal["agents"]
    name: str
    description: str
    path: str
    disabled: bool


class SkillWarningBody(Body):
    path: str
    reason: str


class SkillListBody(Body):
    skills: list[SkillBody]
    warnings: list[SkillWarningBody]


class SkillStatusBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    disabled: bool


class FileChangesBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    change_ids: list[BodyId] = Field(min_length=1, max_length=500)


class AppliedChangeBody(Body):
    change_id: str
    path: str
    undone: bool


class AppliedChangesBody(Body):
    changes: list[AppliedChangeBody]


class ChangeRefusalBody(Body):
    """A file change a revert could not undo (or an unrevert reapply): undo's code and text."""

    change_id: str
    code: str
    message: str


class RevertBody(Body):
    """Issue 26 point 3: the turns reverted (or put back) and what happened to their files."""

    turn_ids: list[str]
    changes: list[AppliedChangeBody]
    conflicts: list[ChangeRefusalBody]


class FileMatchBody(Body):
    path: str
    """Relative to the session's workspace, ``/``-separated."""
    score: int


class FileSearchBody(Body):
    files: list[FileMatchBody]
