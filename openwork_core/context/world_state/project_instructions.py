"""``project/AGENTS.md``: the exact text of ``<working directory>/AGENTS.md`` (§3).

Body::

    <project_instructions>
    {the file's text, unchanged}
    </project_instructions>

Only this one file is read. Missing, or blank (whitespace only) -> the section is absent. A symlink,
anything but a regular file, more than 64 KiB, or not UTF-8 -> ``ProjectInstructionError``.
"""

from __future__ import annotations

import errno
import os

from openwork_core.context.world_state.errors import ProjectInstructionError
from openwork_tools.regular_file import NotRegularFile, open_regular

PROJECT_INSTRUCTIONS_FILE_NAME = "AGENTS.md"
PROJECT_INSTRUCTIONS_TAG = "<project_instructions>"
PROJECT_INSTRUCTIONS_CLOSE_TAG = "</project_instructions>"
PROJECT_INSTRUCTIONS_REPLACEMENT_NOTICE = (
    "The following AGENTS.md instructions replace all previously provided AGENTS.md instructions."
)
PROJECT_INSTRUCTIONS_INVALIDATION_NOTICE = (
    "The previously provided AGENTS.md instructions no longer apply."
)
MAX_PROJECT_INSTRUCTIONS_BYTES = 64 * 1024


def render_project_instructions(text: str) -> str | None:
    """The section body for the file's text, or ``None`` when the text is blank. Pure."""
    if not text.strip():
        return None
    return f"{PROJECT_INSTRUCTIONS_TAG}\n{text}\n{PROJECT_INSTRUCTIONS_CLOSE_TAG}"


def decode_project_instructions(data: bytes) -> str:
    """Check the size and the encoding of the bytes read (at most 64 KiB + 1). Pure."""
    if len(data) > MAX_PROJECT_INSTRUCTIONS_BYTES:
        raise ProjectInstructionError(
            f"{PROJECT_INSTRUCTIONS_FILE_NAME} is larger than 64 KiB "
            f"({MAX_PROJECT_INSTRUCTIONS_BYTES} bytes)"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProjectInstructionError(
            f"{PROJECT_INSTRUCTIONS_FILE_NAME} is not valid UTF-8"
        ) from None


# ---- loader (blocking file I/O; runs inside the capture's worker thread) ----


def read_project_instructions(workspace: str) -> bytes | None:
    """The bytes of ``<workspace>/AGENTS.md`` (at most 64 KiB + 1), or ``None`` when it is missing.

    Opened by ``open_regular`` without following a symlink (refused, not followed) and without
    blocking (a FIFO cannot hang the read); the size is checked by ``decode_project_instructions``.
    """
    path = os.path.join(workspace, PROJECT_INSTRUCTIONS_FILE_NAME)
    try:
        handle = open_regular(path, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except (NotRegularFile, IsADirectoryError):
        raise ProjectInstructionError(
            f"{PROJECT_INSTRUCTIONS_FILE_NAME} is not a regular file"
        ) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ProjectInstructionError(
                f"{PROJECT_INSTRUCTIONS_FILE_NAME} is a symlink; only a regular file is read"
            ) from None
        raise ProjectInstructionError(
            f"{PROJECT_INSTRUCTIONS_FILE_NAME} cannot be opened: {exc.strerror or exc}"
        ) from exc
    try:
        with handle:
            return handle.read(MAX_PROJECT_INSTRUCTIONS_BYTES + 1)
    except OSError as exc:
        raise ProjectInstructionError(
            f"{PROJECT_INSTRUCTIONS_FILE_NAME} cannot be read: {exc.strerror or exc}"
        ) from exc


def load_project_instructions(workspace: str) -> str | None:
    """The section body for ``workspace``, or ``None`` when the section is absent."""
    data = read_project_instructions(workspace)
    if data is None:
        return None
    return render_project_instructions(decode_project_instructions(data))
