"""Durable facts in PostgreSQL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openwork_core.lazy_exports import lazy_getattr

if TYPE_CHECKING:
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

_EXPORTS = {
    "DatabaseUnavailable": "openwork_core.storage.errors",
    "MigrationChecksumMismatch": "openwork_core.storage.errors",
    "MigrationLayoutError": "openwork_core.storage.errors",
    "PostgresStore": "openwork_core.storage.postgres.store",
    "RecordNotFound": "openwork_core.storage.errors",
    "StorageError": "openwork_core.storage.errors",
    "apply_migrations": "openwork_core.storage.migrate",
    "create_pool": "openwork_core.storage.postgres.connection",
    "discover_migrations": "openwork_core.storage.migrate",
}
"""Each public name's module: nothing is imported until a name is used."""

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

if not TYPE_CHECKING:  # for mypy the names are the imports above: a misspelt one is an error
    __getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
