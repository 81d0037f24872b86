"""Storage errors with stable codes."""

from __future__ import annotations

from typing import ClassVar

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


class DuplicateClientRequest(StorageError):
    """A turn with this client_request_id already exists in the session."""

    code = "duplicate_client_request"
    http_status = 409
    message_is_ours = True


class DatabaseUnavailable(StorageError):
    code = "database_unavailable"
    http_status = 503
