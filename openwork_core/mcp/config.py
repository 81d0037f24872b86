"""One MCP server's settings (issue 27 point 1; docs/mcp.md "Configuration").

The same model reads ``[mcp_servers.<name>]`` of the TOML config file and the body of
``PUT /v1/mcp/servers/{name}``: either ``command`` (+ ``args``, ``env``, ``env_vars``, ``cwd``)
for a stdio server, or ``url`` (+ ``headers``, ``bearer_token_env_var``) for streamable HTTP.
Pure: nothing here reads the environment or a file."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from openwork_core.body import RequestModel

SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A server's name: also a path segment of ``/v1/mcp/servers/{name}`` and part of its tools'
names (``mcp__<server>__<tool>``, where ``.`` becomes ``_``)."""
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")
MAX_ARGS = 256
MAX_TEXT = 4096
"""The longest command, argument, URL, directory, header or environment value accepted."""

DEFAULT_STARTUP_TIMEOUT_S = 10.0
DEFAULT_TOOL_TIMEOUT_S = 60.0

Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
Arg = Annotated[str, Field(max_length=MAX_TEXT)]


class ApprovalPolicy(enum.StrEnum):
    """When a call of the server's tools asks the user first (the approval card)."""

    NEVER = "never"
    ALWAYS = "always"
    ANNOTATIONS = "annotations"
    """Ask unless the tool's annotations say it is read-only (``readOnlyHint``)."""


class Transport(enum.StrEnum):
    STDIO = "stdio"
    STREAMABLE_HTTP = "streamable_http"


def server_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a server, or None."""
    if SERVER_NAME.match(name):
        return None
    return "1 to 64 characters of A-Z a-z 0-9 _ . -, starting with a letter or digit"


class McpServerConfig(RequestModel):
    """``enabled_tools`` (when given) and ``disabled_tools`` filter the server's tools by their
    MCP names; ``sandbox`` applies to stdio servers only (docs/mcp.md "Sandbox")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: Text | None = None
    args: tuple[Arg, ...] = Field(default=(), max_length=MAX_ARGS)
    env: dict[str, Arg] = Field(default_factory=dict, repr=False)
    """Set in the server's environment; their values are secrets (never in PostgreSQL)."""
    env_vars: tuple[str, ...] = ()
    """Names of the daemon's own environment variables passed through to the server."""
    cwd: Text | None = None
    url: Text | None = None
    headers: dict[str, Arg] = Field(default_factory=dict, repr=False)
    """Sent with every request; their values are secrets (never in PostgreSQL)."""
    bearer_token_env_var: str | None = None
    """The daemon environment variable whose value is sent as ``Authorization: Bearer``."""
    enabled: bool = True
    startup_timeout_seconds: float = Field(default=DEFAULT_STARTUP_TIMEOUT_S, gt=0, le=600)
    tool_timeout_seconds: float = Field(default=DEFAULT_TOOL_TIMEOUT_S, gt=0, le=86_400)
    enabled_tools: tuple[str, ...] | None = None
    disabled_tools: tuple[str, ...] = ()
    approval: ApprovalPolicy = ApprovalPolicy.ANNOTATIONS
    sandbox: bool = True

    @model_validator(mode="after")
    def _one_transport(self) -> Self:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a stdio server) or url (streamable HTTP)")
        if self.command is not None and (self.headers or self.bearer_token_env_var):
            raise ValueError("headers and bearer_token_env_var are for a url server")
        if self.url is not None and (self.args or self.env or self.env_vars or self.cwd):
            raise ValueError("args, env, env_vars and cwd are for a command server")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError("url must be an http:// or https:// URL")
        if self.cwd is not None and not PurePosixPath(self.cwd).is_absolute():
            raise ValueError("cwd must be an absolute path")
        for name in (*self.env, *self.env_vars, *_optional(self.bearer_token_env_var)):
            if not ENV_NAME.match(name):
                raise ValueError(f"{name[:80]!r} is not an environment variable name")
        for name in self.headers:
            if not HEADER_NAME.match(name):
                raise ValueError(f"{name[:80]!r} is not an HTTP header name")
        for value in (*self.headers.values(), *self.env.values()):
            if "\x00" in value or "\n" in value or "\r" in value:
                raise ValueError("header and environment values must be single lines")
        return self

    @property
    def transport(self) -> Transport:
        return Transport.STDIO if self.command is not None else Transport.STREAMABLE_HTTP

    def allows(self, tool: str) -> bool:
        """Whether the filters let the server's tool ``tool`` into the Tool Surface."""
        if self.enabled_tools is not None and tool not in self.enabled_tools:
            return False
        return tool not in self.disabled_tools

    def secrets(self) -> McpSecrets:
        return McpSecrets(env=dict(self.env), headers=dict(self.headers))

    def without_secrets(self) -> McpServerConfig:
        """The stored form: ``env`` and ``headers`` keep their names, each value blank."""
        return self.model_copy(
            update={
                "env": dict.fromkeys(self.env, ""),
                "headers": dict.fromkeys(self.headers, ""),
            }
        )

    def with_secrets(self, secrets: McpSecrets) -> McpServerConfig:
        """The stored form with the values of the key file (a name without one stays blank)."""
        return self.model_copy(
            update={
                "env": {k: secrets.env.get(k, "") for k in self.env},
                "headers": {k: secrets.headers.get(k, "") for k in self.headers},
            }
        )


def _optional(value: str | None) -> tuple[str, ...]:
    return () if value is None else (value,)


class McpSecrets(BaseModel):
    """The values of a PUT server's ``env`` and ``headers``: kept in the 0600 key file."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    env: dict[str, str] = Field(default_factory=dict)
    headers: dict[str, str] = Field(default_factory=dict)

    def __repr__(self) -> str:  # never show a value
        return f"McpSecrets(env={sorted(self.env)}, headers={sorted(self.headers)})"


ServerSource = Literal["config", "api"]


def merged_servers(
    configured: Mapping[str, McpServerConfig], stored: Mapping[str, McpServerConfig]
) -> dict[str, tuple[McpServerConfig, ServerSource]]:
    """Every server by name: the TOML file's own, then the stored ones it does not name (the
    file wins: it is the user's hand-written configuration, and the API cannot change it)."""
    servers: dict[str, tuple[McpServerConfig, ServerSource]] = {
        name: (config, "config") for name, config in configured.items()
    }
    for name, config in stored.items():
        servers.setdefault(name, (config, "api"))
    return dict(sorted(servers.items()))
