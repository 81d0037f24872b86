"""``runtime/user-project-context``: working directory, repository root, top-level layout (§3).

Body format (version 1), one fact per line::

    <user_project_context format_version="1">
    working_directory: /home/ada/proj/src
    repository_root: /home/ada/proj
    top_level_entries of /home/ada/proj:
    - .git/
    - AGENTS.md
    - src/
    (3 more entries not listed)
    </user_project_context>

``repository_root`` is the nearest ancestor of the working directory (itself included) that holds
a ``.git`` entry, or ``none``; the entries listed are those of the repository root, else of the
working directory. Entries are sorted by name (code point order), directories (not symlinks to
them) end in ``/``, at most 64 are listed and the rest are counted on one line. Names are shown as
they are except that control characters and undecodable bytes are escaped (``\\xNN``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TypeAlias

from openwork_core.context.world_state._display import display_name
from openwork_core.context.world_state.errors import UserProjectContextError

USER_PROJECT_CONTEXT_TAG = '<user_project_context format_version="1">'
USER_PROJECT_CONTEXT_CLOSE_TAG = "</user_project_context>"
USER_PROJECT_CONTEXT_REPLACEMENT_NOTICE = "The project context below replaces the previous one."
USER_PROJECT_CONTEXT_INVALIDATION_NOTICE = "The previous project context no longer applies."

MAX_TOP_LEVEL_ENTRIES = 64
MAX_USER_PROJECT_CONTEXT_CHARS = 16_384
NO_REPOSITORY_ROOT = "none"
EMPTY_LISTING_LINE = "(empty)"


RootEntry: TypeAlias = tuple[str, bool]
"""One top-level entry of the listed root: its name (unique in the directory) and whether it is
a directory. A plain tuple: the listing builds one per entry at every model call."""


def omitted_entries_line(count: int) -> str:
    return f"({count} more {'entry' if count == 1 else 'entries'} not listed)"


def render_user_project_context(
    working_directory: str, repository_root: str | None, entries: Sequence[RootEntry]
) -> str:
    """The section body. Pure. Raises ``UserProjectContextError`` over 16 384 characters."""
    listed_root = repository_root if repository_root is not None else working_directory
    ordered = sorted(entries)
    lines = [
        USER_PROJECT_CONTEXT_TAG,
        f"working_directory: {display_name(working_directory)}",
        "repository_root: "
        + (display_name(repository_root) if repository_root is not None else NO_REPOSITORY_ROOT),
        f"top_level_entries of {display_name(listed_root)}:",
    ]
    lines.extend(
        f"- {display_name(name)}{'/' if is_dir else ''}"
        for name, is_dir in ordered[:MAX_TOP_LEVEL_ENTRIES]
    )
    if not ordered:
        lines.append(EMPTY_LISTING_LINE)
    elif len(ordered) > MAX_TOP_LEVEL_ENTRIES:
        lines.append(omitted_entries_line(len(ordered) - MAX_TOP_LEVEL_ENTRIES))
    lines.append(USER_PROJECT_CONTEXT_CLOSE_TAG)
    body = "\n".join(lines)
    if len(body) > MAX_USER_PROJECT_CONTEXT_CHARS:
        raise UserProjectContextError(
            f"the project context is {len(body)} characters, "
            f"over the limit of {MAX_USER_PROJECT_CONTEXT_CHARS}"
        )
    return body


# ---- loader (blocking file I/O; runs inside the capture's worker thread) ----


def find_repository_root(workspace: str) -> str | None:
    """The nearest ancestor of ``workspace`` (itself included) holding ``.git`` (dir or file)."""
    current = workspace
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def load_user_project_context(workspace: str) -> str:
    """Render the section for the canonical ``workspace`` (one listing of one directory)."""
    repository_root = find_repository_root(workspace)
    listed_root = repository_root if repository_root is not None else workspace
    try:
        with os.scandir(listed_root) as it:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
    except OSError as exc:
        raise UserProjectContextError(
            f"cannot list {display_name(listed_root)}: {exc.strerror or exc}"
        ) from exc
    return render_user_project_context(workspace, repository_root, entries)
