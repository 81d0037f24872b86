"""Storage errors with stable codes."""

from __future__ import annotations

from typing import ClassVar

import asyncpg


class StorageError(Exception):
    code: ClassVar[str] = "persistence_error"


class MigrationChecksumMismatch(StorageError):
    code = "migration_checksum_mismatch"


class MigrationLayoutError(StorageError):
    code = "migration_layout_error"


class RecordNotFound(StorageError):
    code = "not_found"


class DuplicateClientRequest(StorageError):
    """A turn with this client_request_id already exists in the session."""

    code = "duplicate_client_request"


class DatabaseUnavailable(StorageError):
    code = "database_unavailable"


_UNAVAILABLE_STATES = frozenset({"57P01", "57P02", "57P03", "55000", "53300"})
"""admin / crash shutdown, cannot connect now, database not accepting connections (55000 on
connect), too many connections."""


def database_unavailable(exc: BaseException) -> bool:
    """The database could not be reached or dropped the connection (an outage, not a refusal of
    this write): the caller answers ``service_unavailable`` and retries later."""
    if isinstance(exc, DatabaseUnavailable | OSError | TimeoutError):
        return True
    if isinstance(exc, asyncpg.InterfaceError | asyncpg.exceptions.PostgresConnectionError):
        return True
    if isinstance(exc, asyncpg.PostgresError):
        return str(getattr(exc, "sqlstate", "")) in _UNAVAILABLE_STATES or str(
            getattr(exc, "sqlstate", "")
        ).startswith("08")
    cause = exc.__cause__ or exc.__context__
    return cause is not None and cause is not exc and database_unavailable(cause)
