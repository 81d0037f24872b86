"""Where the servers of ``PUT /v1/mcp/servers/{name}`` live (issue 27 point 1).

PostgreSQL holds each server's configuration without a secret (``McpServerConfig.without_secrets``:
``env`` and ``headers`` keep their names, each value blank; ``bearer_token_env_var`` and
``env_vars`` only name the daemon's variables) — ``storage/postgres/mcp_servers.py``. The values
of ``env`` and ``headers`` go to ``OPENWORK_HOME/run/mcp-secrets.json``, written exactly like the
providers' key file (0600, atomic: ``storage/provider_keys.py``), one JSON text per server."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from openwork_core.mcp.config import McpSecrets, McpServerConfig
from openwork_core.storage.provider_keys import read_keys, write_keys

SECRETS_FILE = "mcp-secrets.json"


class McpServerStore(Protocol):
    async def list_mcp_servers(self) -> dict[str, McpServerConfig]:
        """Every stored server, without secrets."""
        ...

    async def put_mcp_server(self, name: str, config: McpServerConfig) -> None: ...

    async def delete_mcp_server(self, name: str) -> bool:
        """Whether there was one."""
        ...


def secrets_path(home: Path) -> Path:
    return home / "run" / SECRETS_FILE


class McpSecretsFile:
    """The servers' secret values by server name (this daemon is the file's only writer)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._values: dict[str, str] | None = None

    def __repr__(self) -> str:
        return f"McpSecretsFile({str(self._path)!r})"

    def load(self) -> None:
        """Read the file now (blocking: off the event loop)."""
        self._values = read_keys(self._path)

    def _loaded(self) -> dict[str, str]:
        if self._values is None:
            self._values = read_keys(self._path)
        return self._values

    def get(self, name: str) -> McpSecrets:
        text = self._loaded().get(name)
        return McpSecrets() if text is None else McpSecrets.model_validate_json(text)

    def set(self, name: str, secrets: McpSecrets) -> None:
        """Blocking. Store the server's values (none: remove its entry); file first, then memory."""
        values = dict(self._loaded())
        if secrets.env or secrets.headers:
            values[name] = secrets.model_dump_json()
        elif name in values:
            del values[name]
        else:
            return
        write_keys(self._path, values)
        self._values = values
