"""Forward-only migrations: numbered SQL files applied in order under an advisory lock, each
recorded with a checksum; a changed applied file refuses the start."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import structlog

from openwork_core.storage.errors import MigrationChecksumMismatch, MigrationLayoutError
from openwork_core.storage.postgres.connection import Conn

log = structlog.get_logger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"
_ADVISORY_LOCK_KEY = 0x0_0E_17_3C_0A  # "openwork migrations"
_FILE_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def discover_migrations(directory: Path = MIGRATIONS_DIR) -> tuple[Migration, ...]:
    """Read ``NNNN_name.sql`` files in order; gaps and duplicates are layout errors."""
    found: list[Migration] = []
    for path in sorted(directory.glob("*.sql")):
        match = _FILE_NAME.match(path.name)
        if match is None:
            raise MigrationLayoutError(
                f"migration file name not of the form NNNN_name.sql: {path.name}"
            )
        found.append(Migration(int(match.group(1)), path.name, path.read_text(encoding="utf-8")))
    for expected, migration in enumerate(found, start=1):
        if migration.version != expected:
            raise MigrationLayoutError(
                f"migrations must be numbered 0001, 0002, … without gaps: found {migration.name}"
            )
    return tuple(found)


async def apply_migrations(
    connection: Conn, migrations: tuple[Migration, ...] | None = None
) -> list[str]:
    """Apply pending migrations; return the names applied. Safe to run concurrently."""
    pending_source = discover_migrations() if migrations is None else migrations
    applied_now: list[str] = []
    await connection.execute("SELECT pg_advisory_lock($1)", _ADVISORY_LOCK_KEY)
    try:
        await connection.execute(
            """CREATE TABLE IF NOT EXISTS schema_migrations (
                   version    INTEGER PRIMARY KEY,
                   name       TEXT NOT NULL,
                   checksum   TEXT NOT NULL,
                   applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"""
        )
        rows = await connection.fetch("SELECT version, name, checksum FROM schema_migrations")
        applied = {int(r["version"]): (str(r["name"]), str(r["checksum"])) for r in rows}
        for migration in pending_source:
            recorded = applied.get(migration.version)
            if recorded is not None:
                if recorded[1] != migration.checksum:
                    raise MigrationChecksumMismatch(
                        f"applied migration {recorded[0]} was changed on disk "
                        f"(checksum {recorded[1][:12]}… ≠ {migration.checksum[:12]}…); "
                        "never edit an applied migration, add a new one"
                    )
                continue
            async with connection.transaction():
                await connection.execute(migration.sql)
                await connection.execute(
                    "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                    migration.version,
                    migration.name,
                    migration.checksum,
                )
            applied_now.append(migration.name)
            log.info("migration.applied", name=migration.name)
    finally:
        await connection.execute("SELECT pg_advisory_unlock($1)", _ADVISORY_LOCK_KEY)
    return applied_now
