"""File search for the desktop's @-mention (issue 26 §5): one kept index per workspace.

The last few workspaces searched keep their ``WorkspaceFileIndex`` and the ``SearchablePaths``
built from its current list; a query brings the index up to date (a ``stat`` per directory),
prepares the paths again only when the list changed, and ranks them — all in a worker thread,
one query per workspace at a time.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from openwork_core.desktop.file_index import WorkspaceFileIndex
from openwork_core.desktop.fuzzy import RankedPath, SearchablePaths

KEPT_WORKSPACES = 4


@dataclass(slots=True)
class _Kept:
    index: WorkspaceFileIndex
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    searchable: SearchablePaths | None = None
    listed: object = None
    """The list ``searchable`` was built from (the index hands out a new one when it changes)."""


class FileSearch:
    def __init__(self, skip: Iterable[Path] = (), kept: int = KEPT_WORKSPACES) -> None:
        self._skip = frozenset(p.resolve() for p in skip)
        self._kept_limit = kept
        self._kept: OrderedDict[Path, _Kept] = OrderedDict()

    async def find(self, workspace: Path, query: str, limit: int) -> list[RankedPath]:
        kept = self._kept.get(workspace)
        if kept is None:
            kept = _Kept(WorkspaceFileIndex(workspace, self._skip))
            self._kept[workspace] = kept
            while len(self._kept) > self._kept_limit:
                self._kept.popitem(last=False)
        self._kept.move_to_end(workspace)
        async with kept.lock:
            return await asyncio.to_thread(_search, kept, query, limit)


def _search(kept: _Kept, query: str, limit: int) -> list[RankedPath]:
    paths = kept.index.paths()
    if kept.searchable is None or kept.listed is not paths:
        kept.searchable, kept.listed = SearchablePaths(paths), paths
    return kept.searchable.rank(query, limit)
