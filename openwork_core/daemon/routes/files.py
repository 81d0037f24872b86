"""GET /v1/sessions/{sid}/files: fuzzy file search in the session's workspace (issue 26 §5,
docs/api.md "File search")."""

from __future__ import annotations

import functools
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Query

from openwork_core.daemon.schemas import FileMatchBody, FileSearchBody
from openwork_core.daemon.validation import SessionIdPath, StorableStr
from openwork_core.desktop.file_search import FileSearch
from openwork_core.storage.codec import storable_text
from openwork_tools.context import default_credential_paths

if TYPE_CHECKING:
    from openwork_core.service import OpenWorkCore

MAX_QUERY_CHARS = 256
MAX_LIMIT = 200
TAGS: list[str | Enum] = ["files"]


def files_routes(router: APIRouter, core: OpenWorkCore) -> None:
    @functools.cache
    def search() -> FileSearch:
        """Made at the first query (the OpenAPI document is built with no core)."""
        return FileSearch(skip=(core.home, *default_credential_paths(Path.home())))

    @router.get("/v1/sessions/{sid}/files", response_model=FileSearchBody, tags=TAGS)
    async def find_files(
        sid: SessionIdPath,
        query: Annotated[StorableStr, Query(max_length=MAX_QUERY_CHARS)] = "",
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 20,
    ) -> FileSearchBody:
        record = await core.get_session(sid)
        ranked = await search().find(Path(record.working_directory), query, limit)
        # A name that is not UTF-8 holds lone surrogates (``surrogateescape``), which JSON cannot
        # carry: written with the storage rule's escape, as the tools show it to the model.
        files = [FileMatchBody(path=storable_text(r.path), score=r.score) for r in ranked]
        return FileSearchBody(files=files)
