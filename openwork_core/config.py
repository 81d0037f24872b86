"""Daemon configuration (daemon-api.md §1): the environment, then an optional TOML file with the
same setting names (``OPENWORK_CONFIG``, else ``config.toml`` in the platform's config dir for
``openwork``); the environment wins. ``load_settings`` turns every problem into a
``ConfigError`` that names the setting and says what to do."""

from __future__ import annotations

import difflib
import ipaddress
import os
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from openwork_core.mcp.config import McpServerConfig, server_name_problem
from openwork_core.models.capabilities import CapabilityError, resolve_capabilities
from openwork_core.storage.records import (
    ProviderKind,
    ProviderModel,
    ProviderRecord,
    ProviderSettings,
)
from openwork_tools.policy import (
    DEFAULT_MAX_FILE_MB,
    DEFAULT_MAX_PROCESSES,
    DEFAULT_MEMORY_MB,
    NetworkSetting,
    SandboxSettings,
)

DEFAULT_PROVIDER_ID = "default"
DEFAULT_PROVIDER_KEY_ENV = "OPENWORK_PROVIDER_API_KEY"
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
"""``OPENWORK_MAX_BODY_BYTES``: a larger request body is refused with 413 (reliability.md)."""
DEFAULT_MAX_INPUT_CHARS = 1_000_000
"""``OPENWORK_MAX_INPUT_CHARS``: the text of one turn's input, all parts together."""


ENV_PREFIX = "OPENWORK_"
CONFIG_ENV = "OPENWORK_CONFIG"
PROCESS_VARIABLES = frozenset({CONFIG_ENV, "OPENWORK_FAULTPOINT"})
"""``OPENWORK_*`` variables that are not settings: where the file is, and the fault injection of
the kill matrix (``openwork_tools.faults``)."""


class ConfigError(Exception):
    """A setting that prevents the start: ``setting`` is its environment name."""

    code = "invalid_config"

    def __init__(self, setting: str, problem: str, fix: str) -> None:
        super().__init__(f"{setting}: {problem}; {fix}")
        self.setting = setting
        self.problem = problem
        self.fix = fix


def config_file_path() -> Path:
    """``OPENWORK_CONFIG`` when set, else ``config.toml`` in the platform's config dir."""
    explicit = os.environ.get(CONFIG_ENV)
    if explicit:
        return Path(explicit).expanduser()
    return Path(platformdirs.user_config_dir("openwork", appauthor=False)) / "config.toml"


def default_home() -> Path:
    return Path(platformdirs.user_data_dir("openwork", appauthor=False))


def default_skill_root() -> Path | None:
    home = os.environ.get("HOME")
    return None if not home else Path(home) / ".agents" / "skills"


class OpenWorkSettings(BaseModel):
    """Built from, highest first: the keyword arguments, the ``OPENWORK_*`` environment variables
    (names in any case) and the TOML file (``config_file_path``), each value validated as given."""

    model_config = ConfigDict(extra="ignore")

    home: Path = Field(default_factory=default_home)
    database_url: str | None = None
    listen: str = "127.0.0.1:7420"
    allow_remote: bool = False
    token: str | None = Field(default=None, repr=False)
    allowed_origins: str = ""
    log_format: Literal["json", "console"] | None = None
    max_body_bytes: int = Field(default=DEFAULT_MAX_BODY_BYTES, gt=0)
    max_input_chars: int = Field(default=DEFAULT_MAX_INPUT_CHARS, gt=0)
    session_lease_seconds: float = Field(default=30.0, gt=0)
    """How long a session's lease lasts without renewal (renewed every third of it)."""
    session_idle_seconds: float = Field(default=600.0, gt=0)
    """A loaded session idle this long is unloaded (its actor stopped, its lease given back)."""
    max_loaded_sessions: int = Field(default=256, ge=1)
    """Beyond this many loaded sessions the least recently used idle ones are unloaded."""
    sandbox_network: NetworkSetting = NetworkSetting.OFF
    """``off``: bash has loopback only unless a call's card grants the network; ``on``: every
    bash call shares the host's network (issue 22)."""
    sandbox_memory_mb: int = Field(default=DEFAULT_MEMORY_MB, gt=0)
    """The memory of each process of a bash command (``RLIMIT_DATA``), in MiB."""
    sandbox_max_processes: int = Field(default=DEFAULT_MAX_PROCESSES, gt=0)
    """The processes of one bash command tree."""
    sandbox_max_file_mb: int = Field(default=DEFAULT_MAX_FILE_MB, gt=0)
    """The largest file a bash command may write (``RLIMIT_FSIZE``), in MiB."""

    provider: ProviderKind | None = None
    provider_base_url: str | None = None
    provider_api_key: str | None = Field(default=None, repr=False)
    model: str | None = None
    model_context_window: int | None = None
    """None: the built-in catalog's window for a well-known model, else 128,000 (issue 14)."""
    model_max_output_tokens: int | None = None
    model_max_reasoning_tokens: int = 0
    model_accepts_data_blocks: bool | None = None
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    """``[mcp_servers.<name>]`` tables of the TOML file (docs/mcp.md)."""

    @field_validator("mcp_servers")
    @classmethod
    def _server_names(cls, value: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
        for name in value:
            problem = server_name_problem(name)
            if problem is not None:
                raise ValueError(f"the server name {name[:80]!r} is not {problem}")
        return value

    @field_validator(
        "provider",
        "provider_base_url",
        "provider_api_key",
        "model",
        "token",
        "database_url",
        "log_format",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        """``VAR=`` (as compose writes ``${VAR:-}``) means unset."""
        return None if value == "" else value

    @field_validator("listen")
    @classmethod
    def _listen_is_host_and_port(cls, value: str) -> str:
        listen_host_port(value)
        return value

    @field_validator("database_url")
    @classmethod
    def _database_url_is_postgres(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        scheme = value.partition("://")[0]
        if "://" not in value or scheme not in ("postgres", "postgresql"):
            raise ValueError("not a PostgreSQL URL (postgresql://user:password@host:5432/db)")
        return value

    @model_validator(mode="before")
    @classmethod
    def _from_environment_and_file(cls, given: object) -> object:
        if not isinstance(given, dict):
            return given
        return _file_values() | _environment_values(cls.model_fields) | given

    @property
    def listen_host_port(self) -> tuple[str, int]:
        return listen_host_port(self.listen)

    @property
    def sandbox_settings(self) -> SandboxSettings:
        return SandboxSettings(
            network=self.sandbox_network,
            memory_mb=self.sandbox_memory_mb,
            max_processes=self.sandbox_max_processes,
            max_file_mb=self.sandbox_max_file_mb,
        )

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
            model = ProviderModel(
                name=self.model,
                context_window=self.model_context_window,
                max_output_tokens=self.model_max_output_tokens,
                max_reasoning_tokens=self.model_max_reasoning_tokens,
                accepts_data_blocks=self.model_accepts_data_blocks,
            )
            # fail at start, not at the first turn (model-providers.md §4)
            resolve_capabilities(model, ProviderSettings())
            models = (model,)
        return ProviderRecord(
            id=DEFAULT_PROVIDER_ID,
            kind=self.provider,
            base_url=self.provider_base_url,
            api_key_env=DEFAULT_PROVIDER_KEY_ENV if self.provider_api_key else None,
            models=models,
        )


def listen_host_port(listen: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port``; a blank host is 127.0.0.1). The host is an IP address or
    ``localhost``; port 0 picks a free one."""
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError("not of the form host:port")
    host = (host or "127.0.0.1").strip("[]")
    if host != "localhost":
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise ValueError(f"the host {host!r} is not an IP address or localhost") from None
    return host, int(port)


_SECRET_FIELDS = frozenset({"database_url", "token", "provider_api_key"})
_FIXES = {
    "listen": "set it to host:port, for example 127.0.0.1:7420 (port 0 picks a free one)",
    "provider": "use openai-chat, openai-responses or anthropic, or leave it unset",
    "database_url": "use postgresql://user:password@host:5432/database, or unset it for the "
    "embedded database",
    "sandbox_network": "use off (the default) or on",
    "mcp_servers": "fix the server's table in the config file (docs/mcp.md lists its settings)",
}


def _environment_values(fields: Iterable[str]) -> dict[str, object]:
    """``OPENWORK_<FIELD>`` in any case (``os.environ``'s last spelling wins, as it lists them)."""
    wanted = {ENV_PREFIX.lower() + name: name for name in fields}
    found: dict[str, object] = {}
    for key, value in os.environ.items():
        name = wanted.get(key.lower())
        if name is not None:
            found[name] = value
    return found


def _file_values() -> dict[str, object]:
    path = config_file_path()
    return _read_file(path) if path.is_file() else {}


def _read_file(path: Path) -> dict[str, object]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(
            CONFIG_ENV, f"cannot read {path} ({exc})", "fix or remove the file"
        ) from None


def _not_a_setting(name: str, known: Iterable[str], where: str, prefix: str = "") -> str:
    """Names are compared without their common ``prefix`` (every variable shares it)."""
    stripped = [k.removeprefix(prefix) for k in known]
    closest = difflib.get_close_matches(name.removeprefix(prefix), stripped, n=1, cutoff=0.6)
    hint = f"did you mean {prefix}{closest[0]}?" if closest else "it is ignored"
    return f"{where}{name} is not a setting ({hint})"


def unknown_settings() -> list[str]:
    """Issue 24 point 6: one line per ``OPENWORK_*`` variable and per key of the TOML file that
    is no setting (a typo), naming the closest known one; such a name is ignored."""
    fields = OpenWorkSettings.model_fields
    names = {ENV_PREFIX + name.upper() for name in fields} | PROCESS_VARIABLES
    found = [
        _not_a_setting(key.upper(), names, "", ENV_PREFIX)
        for key in sorted(os.environ)
        if key.upper().startswith(ENV_PREFIX) and key.upper() not in names
    ]
    path = config_file_path()
    if path.is_file():
        found.extend(
            _not_a_setting(key, fields, f"{path}: ")
            for key in _read_file(path)
            if key not in fields
        )
    return found


def load_settings() -> OpenWorkSettings:
    """The effective settings, or a ``ConfigError`` naming the first bad setting."""
    path = config_file_path()
    if os.environ.get(CONFIG_ENV) and not path.is_file():
        raise ConfigError(CONFIG_ENV, f"{path} does not exist", "create it or unset the variable")
    try:
        settings = OpenWorkSettings()
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "?"
        message = str(first["msg"]).removeprefix("Value error, ")
        if field == "mcp_servers":  # a table of the file: named by its path, values unshown
            place = ".".join(str(part) for part in first["loc"])
            raise ConfigError(f"{path}: {place}", message, _FIXES[field]) from None
        if field not in _SECRET_FIELDS:
            message = f"{first['input']!r}: {message}"
        fix = _FIXES.get(field, "fix the value or unset it")
        raise ConfigError(ENV_PREFIX + field.upper(), message, fix) from None
    try:
        settings.default_provider()
    except CapabilityError as exc:
        raise ConfigError(
            "OPENWORK_MODEL_MAX_OUTPUT_TOKENS",
            str(exc),
            "lower it (and OPENWORK_MODEL_MAX_REASONING_TOKENS) below OPENWORK_MODEL_CONTEXT_WINDOW",
        ) from None
    return settings


def redact_database_url(url: str) -> str:
    """The URL without its password (for banners, doctor and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{parts.username}@{host}" if parts.username else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


MASK = "********"


def masked_settings(settings: OpenWorkSettings) -> dict[str, str]:
    """Every setting by its environment name; the token, the key and the database password
    masked."""
    out: dict[str, str] = {}
    for name in OpenWorkSettings.model_fields:
        value = getattr(settings, name)
        if value is None:
            shown = "(unset)"
        elif name in ("token", "provider_api_key"):
            shown = MASK
        elif name == "database_url":
            shown = redact_database_url(str(value))
        else:
            shown = str(value)
        out[ENV_PREFIX + name.upper()] = shown
    return out
