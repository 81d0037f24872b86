"""Storage errors with stable codes."""

from __future__ import annotations

from typing import ClassVar

import asyncpg

from openwork_chat_state.error_root import NotFound, OpenWorkError


class StorageError(OpenWorkError):
    code: ClassVar[str] = "persistence_error"
    message_is_ours: ClassVar[bool] = False
    """True where the message is written by us (an id, a rule); otherwise it may carry the
    database's text, which never reaches a client (reliability.md "No internals")."""

    @property
    def public_message(self) -> str:
        return str(self) if self.message_is_ours else "the database could not complete the request"


class MigrationChecksumMismatch(StorageError):
    code = "migration_checksum_mismatch"


class MigrationLayoutError(StorageError):
    code = "migration_layout_error"


class RecordNotFound(StorageError, NotFound):
    code = "not_found"
    http_status = 404
    message_is_ours = True


class InvalidPlanCommit(StorageError):
    """A plan write's inputs do not fit together; nothing was written."""

    code = "invalid_plan_commit"


class DatabaseUnavailable(StorageError):
    code = "database_unavailable"
    http_status = 503


_UNAVAILABLE_STATES = frozenset({"57P01", "57P02", "57P03", "55000", "53300"})
"""admin / crash shutdown, cannot connect now, database not accepting connections (55000 on
connect), too many connections."""


WRITE_FAILURES = (
    StorageError,
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    OSError,
)
"""What a failed write raises: a refusal of this write (``StorageError``, a constraint) or the
database going away; nothing of the write is committed."""


def database_unavailable(exc: BaseException) -> bool:
    """The database could not be reached or dropped the connection (an outage, not a refusal of
    this write): the caller answers ``service_unavailable`` and retries later."""
    if isinstance(exc, DatabaseUnavailable | OSError | TimeoutError):
        return True
    if isinstance(
        exc,
        asyncpg.InterfaceError
        | asyncpg.InternalClientError  # a connection whose protocol an outage left mid-error
        | asyncpg.exceptions.PostgresConnectionError,
    ):
        return True
    if isinstance(exc, asyncpg.PostgresError):
        return str(getattr(exc, "sqlstate", "")) in _UNAVAILABLE_STATES or str(
            getattr(exc, "sqlstate", "")
        ).startswith("08")
    cause = exc.__cause__ or exc.__context__
    return cause is not None and cause is not exc and database_unavailable(cause)
