"""The embedded PostgreSQL server (pgserver) with its data under OPENWORK_HOME, kept across
restarts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class _PgServer(Protocol):
    def get_uri(self, database: str | None = None) -> str: ...
    def cleanup(self) -> None: ...


@dataclass
class EmbeddedPostgres:
    server: _PgServer

    @property
    def url(self) -> str:
        return self.server.get_uri()

    def stop(self) -> None:
        self.server.cleanup()


def start_embedded_postgres(home: Path) -> EmbeddedPostgres:
    """Start (or attach to) the server in ``home/pgdata``; data survives the process."""
    from pgserver import get_server  # type: ignore[attr-defined]

    data_dir = home / "pgdata"
    data_dir.mkdir(parents=True, exist_ok=True)
    server = get_server(data_dir, cleanup_mode="stop")
    return EmbeddedPostgres(server)
