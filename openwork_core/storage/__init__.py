"""Durable facts in PostgreSQL."""

from __future__ import annotations

from openwork_core.storage.errors import (
    DatabaseUnavailable,
    MigrationChecksumMismatch,
    MigrationLayoutError,
    RecordNotFound,
    StorageError,
)
from openwork_core.storage.migrate import apply_migrations, discover_migrations
from openwork_core.storage.postgres.connection import create_pool
from openwork_core.storage.postgres.store import PostgresStore

__all__ = [
    "DatabaseUnavailable",
    "MigrationChecksumMismatch",
    "MigrationLayoutError",
    "PostgresStore",
    "RecordNotFound",
    "StorageError",
    "apply_migrations",
    "create_pool",
    "discover_migrations",
]
