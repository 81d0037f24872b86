"""Storage errors with stable codes."""

from __future__ import annotations

from typing import ClassVar


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
