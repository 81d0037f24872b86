"""Daemon configuration from the environment (daemon-api.md §1)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from openwork_core.models.capabilities import ModelCapabilities
from openwork_core.storage.records import ProviderKind, ProviderModel, ProviderRecord

DEFAULT_PROVIDER_ID = "default"
DEFAULT_PROVIDER_KEY_ENV = "OPENWORK_PROVIDER_API_KEY"


def default_home() -> Path:
    return Path(platformdirs.user_data_dir("openwork", appauthor=False))


def default_skill_root() -> Path | None:
    home = os.environ.get("HOME")
    return None if not home else Path(home) / ".agents" / "skills"


class OpenWorkSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="OPENWORK_", extra="ignore")

    home: Path = Field(default_factory=default_home)
    database_url: str | None = None
    listen: str = "127.0.0.1:7420"
    token: str | None = None
    allowed_origins: str = ""
    log_format: Literal["json", "console"] | None = None
    session_lease_seconds: float = Field(default=30.0, gt=0)
    """How long a session's lease lasts without renewal (renewed every third of it)."""
    session_idle_seconds: float = Field(default=600.0, gt=0)
    """A loaded session idle this long is unloaded (its actor stopped, its lease given back)."""
    max_loaded_sessions: int = Field(default=256, ge=1)
    """Beyond this many loaded sessions the least recently used idle ones are unloaded."""

    provider: ProviderKind | None = None
    provider_base_url: str | None = None
    provider_api_key: str | None = Field(default=None, repr=False)
    model: str | None = None
    model_context_window: int = 128_000
    model_max_output_tokens: int = 16_384
    model_max_reasoning_tokens: int = 0
    model_accepts_data_blocks: bool = True

    @field_validator("provider", mode="before")
    @classmethod
    def _blank_provider_is_none(cls, value: object) -> object:
        return None if value == "" else value

    @property
    def listen_host_port(self) -> tuple[str, int]:
        host, _, port = self.listen.rpartition(":")
        return (host or "127.0.0.1").strip("[]"), int(port)

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(o.strip() for o in self.allowed_origins.split(",") if o.strip())

    def default_provider(self) -> ProviderRecord | None:
        """The provider ``default`` from the OPENWORK_PROVIDER* / OPENWORK_MODEL* variables.
        The key itself is never stored: the record names the variable that holds it."""
        if self.provider is None:
            return None
        models: tuple[ProviderModel, ...] = ()
        if self.model:
            ModelCapabilities(  # fail at start, not at the first turn (model-providers.md §4)
                context_window_tokens=self.model_context_window,
                max_output_tokens=self.model_max_output_tokens,
                max_reasoning_tokens=self.model_max_reasoning_tokens or None,
            )
            models = (
                ProviderModel(
                    name=self.model,
                    context_window=self.model_context_window,
                    max_output_tokens=self.model_max_output_tokens,
                    max_reasoning_tokens=self.model_max_reasoning_tokens,
                    accepts_data_blocks=self.model_accepts_data_blocks,
                ),
            )
        return ProviderRecord(
            id=DEFAULT_PROVIDER_ID,
            kind=self.provider,
            base_url=self.provider_base_url,
            api_key_env=DEFAULT_PROVIDER_KEY_ENV if self.provider_api_key else None,
            models=models,
        )
