"""Forward-only migrations: numbered SQL files applied in order under an advisory lock, each
recorded with a checksum; a changed applied file refuses the start."""

from __future__ import annotations

import hashlib
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

import structlog

from openwork_core.storage.errors import MigrationChecksumMismatch, MigrationLayoutError
from openwork_core.storage.postgres.connection import Conn

log = structlog.get_logger(__name__)

_SOURCE_TREE_DIR = Path(__file__).resolve().parents[2] / "migrations"
_PACKAGE = "openwork_migrations"
"""The wheel ships the top-level ``migrations/`` folder as this data-only package (setup.py)."""


def migrations_dir() -> Path:
    """The folder of the numbered SQL files: ``migrations/`` beside the source tree when running
    from a checkout (or an editable install), else the installed ``openwork_migrations``."""
    if _SOURCE_TREE_DIR.is_dir():
        return _SOURCE_TREE_DIR
    spec = importlib.util.find_spec(_PACKAGE)
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for location in locations:
        if Path(location).is_dir():
            return Path(location)
    raise MigrationLayoutError(
        f"no migrations found: neither {_SOURCE_TREE_DIR} nor the installed package {_PACKAGE}"
    )


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


def discover_migrations(directory: Path | None = None) -> tuple[Migration, ...]:
    """Read ``NNNN_name.sql`` files in order; duplicates and none at all are layout errors. A gap
    is allowed: a number reserved by a change on another branch (0009 lands before 0008); each
    file is applied once whenever it appears, so a later 0008 is applied after 0009."""
    found: list[Migration] = []
    folder = migrations_dir() if directory is None else directory
    for path in sorted(folder.glob("*.sql")):
        match = _FILE_NAME.match(path.name)
        if match is None:
            raise MigrationLayoutError(
                f"migration file name not of the form NNNN_name.sql: {path.name}"
            )
        found.append(Migration(int(match.group(1)), path.name, path.read_text(encoding="utf-8")))
    if not found:
        raise MigrationLayoutError(f"no migration files (NNNN_name.sql) in {folder}")
    previous = 0
    for migration in found:
        if migration.version <= previous:
            raise MigrationLayoutError(
                f"migration numbers must be unique and ascending: found {migration.name} "
                f"after version {previous:04d}"
            )
        previous = migration.version
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
