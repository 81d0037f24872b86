"""Skill discovery: scan the skill root's children, parse each ``SKILL.md`` (skills.md §1–§2).

The scan is synchronous file I/O; callers on the event loop run it in a worker thread (the World
State capture does, inside its single ``asyncio.to_thread`` call). A skill's summary is a pure
function of its path, name and text and is memoised on them, so an unchanged skill is read but not
re-parsed at every sampling.
"""

from __future__ import annotations

import errno
import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from openwork_chat_state.error_root import OpenWorkError
from openwork_tools.regular_file import NotRegularFile, open_regular

SKILL_FILE_NAME = "SKILL.md"
MAX_SKILLS = 100
MAX_SKILL_FILE_BYTES = 64 * 1024
MAX_DESCRIPTION_CHARS = 1024
MAX_DIR_NAME_BYTES = 64

_NAME_RE = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_FRONTMATTER_FENCE = "---"


# Warning reasons: fixed English texts, one per cause (skills.md §1 "distinct per cause").
REASON_ROOT_UNREADABLE = "the skill root cannot be read"
REASON_DIR_NAME_NOT_UTF8 = "the skill directory name is not valid UTF-8"
REASON_DIR_NAME_INVALID = (
    "the skill directory name must be 1-64 bytes of lowercase ASCII letters, digits and '-', "
    "starting and ending with a letter or digit"
)
REASON_LIMIT_REACHED = f"more than {MAX_SKILLS} skills were found; this skill is not loaded"
REASON_PATH_NOT_UTF8 = "the skill path is not valid UTF-8"
REASON_PATH_CONTROL = "the skill path contains control characters"
REASON_FILE_MISSING = "SKILL.md is missing"
REASON_FILE_SYMLINK = "SKILL.md is a symlink"
REASON_FILE_NOT_REGULAR = "SKILL.md is not a regular file"
REASON_FILE_TOO_LARGE = f"SKILL.md is larger than 64 KiB ({MAX_SKILL_FILE_BYTES} bytes)"
REASON_FILE_UNREADABLE = "SKILL.md cannot be read"
REASON_FILE_NOT_UTF8 = "SKILL.md is not valid UTF-8"
REASON_NO_FRONTMATTER = "SKILL.md does not start with a '---' frontmatter line"
REASON_FRONTMATTER_UNCLOSED = "the SKILL.md frontmatter is not closed by a '---' line"
REASON_FRONTMATTER_INVALID_YAML = "the SKILL.md frontmatter is not valid YAML"
REASON_FRONTMATTER_NOT_MAPPING = "the SKILL.md frontmatter is not a YAML mapping"
REASON_NAME_NOT_STRING = "the name field is not a string"
REASON_NAME_INVALID = "the name field is not a valid skill name"
REASON_NAME_MISMATCH = "the name field does not match the skill directory name"
REASON_DESCRIPTION_MISSING = "the description field is missing"
REASON_DESCRIPTION_NOT_STRING = "the description field is not a string"
REASON_DESCRIPTION_EMPTY = "the description field is empty"


class SkillError(OpenWorkError):
    """A skill that cannot be used; ``reason`` is the fixed English text of the cause."""

    code: ClassVar[str] = "skill_unusable"
    http_status: ClassVar[int] = 422

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SkillLoadError(SkillError):
    """The skill's directory or ``SKILL.md`` could not be read as a file (type, size, encoding)."""

    code = "skill_load_error"


class SkillParseError(SkillError):
    """``SKILL.md`` was read but its frontmatter or fields are invalid."""

    code = "skill_parse_error"


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillSummary:
    """One discovered skill. ``path`` is the absolute path of its ``SKILL.md`` (canonical root +
    directory name + ``SKILL.md``, not normalised further)."""

    source: Literal["agents"] = "agents"
    name: str
    description: str
    path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillWarning:
    path: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillDiscovery:
    skills: tuple[SkillSummary, ...] = ()
    warnings: tuple[SkillWarning, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedSkillFile:
    """The fields of a ``SKILL.md`` read from its text (before the directory-name checks)."""

    name: str | None
    description: str
    body: str


def is_valid_skill_name(name: str) -> bool:
    """skills.md §1: 1–64 bytes of lowercase ASCII letters, digits and ``-``; a letter or digit
    at both ends."""
    return len(name.encode()) <= MAX_DIR_NAME_BYTES and _NAME_RE.fullmatch(name) is not None


def normalize_whitespace(text: str) -> str:
    """Split on any whitespace and join with single spaces (skills.md §1)."""
    return " ".join(text.split())


def _trim_blank_lines(text: str) -> str:
    lines = text.splitlines()
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end])


def parse_skill_text(text: str) -> ParsedSkillFile:
    """Parse a ``SKILL.md`` text: frontmatter fences, YAML, ``name`` and ``description``.

    Pure. Raises ``SkillParseError`` with the reason of the first failure.
    """
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != _FRONTMATTER_FENCE:
        raise SkillParseError(REASON_NO_FRONTMATTER)
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip() == _FRONTMATTER_FENCE), None)
    if close is None:
        raise SkillParseError(REASON_FRONTMATTER_UNCLOSED)
    import yaml  # here: a daemon without skills never loads it (issue 13 §5)

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C one: same semantics, faster
    try:
        data: object = yaml.load("".join(lines[1:close]), Loader=loader)
    except yaml.YAMLError:
        raise SkillParseError(REASON_FRONTMATTER_INVALID_YAML) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SkillParseError(REASON_FRONTMATTER_NOT_MAPPING)
    raw_name = data.get("name")
    name: str | None = None
    if raw_name is not None:
        if not isinstance(raw_name, str):
            raise SkillParseError(REASON_NAME_NOT_STRING)
        name = normalize_whitespace(raw_name)
        if not is_valid_skill_name(name):
            raise SkillParseError(REASON_NAME_INVALID)
    if "description" not in data or data["description"] is None:
        raise SkillParseError(REASON_DESCRIPTION_MISSING)
    raw_description = data["description"]
    if not isinstance(raw_description, str):
        raise SkillParseError(REASON_DESCRIPTION_NOT_STRING)
    description = normalize_whitespace(raw_description)[:MAX_DESCRIPTION_CHARS].rstrip()
    if not description:
        raise SkillParseError(REASON_DESCRIPTION_EMPTY)
    body = _trim_blank_lines("".join(lines[close + 1 :]))
    return ParsedSkillFile(name=name, description=description, body=body)


def _check_path_text(path: str) -> None:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise SkillLoadError(REASON_PATH_NOT_UTF8) from None
    if _CONTROL_RE.search(path):
        raise SkillLoadError(REASON_PATH_CONTROL)


def _read_skill_text(path: str) -> str:
    """Read one ``SKILL.md``: not a symlink, a regular file, at most 64 KiB, UTF-8."""
    try:
        handle = open_regular(path, follow_symlinks=False)
    except FileNotFoundError:
        raise SkillLoadError(REASON_FILE_MISSING) from None
    except (NotRegularFile, IsADirectoryError):
        raise SkillLoadError(REASON_FILE_NOT_REGULAR) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SkillLoadError(REASON_FILE_SYMLINK) from None
        raise SkillLoadError(REASON_FILE_UNREADABLE) from None
    try:
        with handle:
            data = handle.read(MAX_SKILL_FILE_BYTES + 1)
    except OSError:
        raise SkillLoadError(REASON_FILE_UNREADABLE) from None
    if len(data) > MAX_SKILL_FILE_BYTES:
        raise SkillLoadError(REASON_FILE_TOO_LARGE)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillLoadError(REASON_FILE_NOT_UTF8) from None


@functools.lru_cache(maxsize=2 * MAX_SKILLS)  # > the working set; at most ~13 MB of text
def _summary(path: str, name: str, text: str) -> SkillSummary:
    """The summary of the skill ``name`` whose ``SKILL.md`` at ``path`` holds ``text``. Pure and
    memoised, so an unchanged skill costs one read per scan."""
    parsed = parse_skill_text(text)
    if parsed.name is not None and parsed.name != name:
        raise SkillParseError(REASON_NAME_MISMATCH)
    return SkillSummary(name=name, description=parsed.description, path=path)


def read_skill_body(path: Path | str) -> str:
    """The body of one ``SKILL.md`` for explicit selection: the text after the frontmatter with
    leading and trailing blank lines removed. Raises ``SkillLoadError`` / ``SkillParseError``."""
    text = str(path)
    _check_path_text(text)
    return parse_skill_text(_read_skill_text(text)).body


def _display(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace")


def _canonical_root(root: Path) -> tuple[str | None, SkillWarning | None]:
    try:
        resolved = os.path.realpath(root, strict=True)
    except FileNotFoundError:
        return None, None
    except OSError:
        return None, SkillWarning(path=str(root), reason=REASON_ROOT_UNREADABLE)
    return resolved, None


def discover_skills(root: Path | None) -> SkillDiscovery:
    """Scan ``root``'s direct children (skills.md §2). Blocking; never raises for a bad skill.

    A missing root (or ``None``) is an empty source without a warning; an existing root that cannot
    be listed is an empty source with one warning. Non-directories, dot directories and symlinks are
    skipped silently; every other failing candidate yields one warning and does not count toward
    the limit of 100. The result is sorted by source, name and path.
    """
    if root is None:
        return SkillDiscovery()
    canonical, warning = _canonical_root(root)
    if canonical is None:
        return SkillDiscovery(warnings=(warning,) if warning else ())
    raw_root = os.fsencode(canonical)
    try:
        with os.scandir(raw_root) as it:
            candidates = sorted(
                e.name
                for e in it
                if e.is_dir(follow_symlinks=False) and not e.name.startswith(b".")
            )
    except OSError:
        unreadable = SkillWarning(path=canonical, reason=REASON_ROOT_UNREADABLE)
        return SkillDiscovery(warnings=(unreadable,))

    prefix = canonical if canonical.endswith(os.sep) else canonical + os.sep
    try:
        _check_path_text(canonical)  # a valid directory name cannot make the path invalid
        path_problem: str | None = None
    except SkillLoadError as exc:
        path_problem = exc.reason
    skills: list[SkillSummary] = []
    warnings: list[SkillWarning] = []
    for raw_name in candidates:
        directory = prefix + _display(raw_name)
        if len(skills) >= MAX_SKILLS:
            warnings.append(SkillWarning(path=directory, reason=REASON_LIMIT_REACHED))
            continue
        try:
            name = raw_name.decode("utf-8")
        except UnicodeDecodeError:
            warnings.append(SkillWarning(path=directory, reason=REASON_DIR_NAME_NOT_UTF8))
            continue
        if not is_valid_skill_name(name):
            warnings.append(SkillWarning(path=directory, reason=REASON_DIR_NAME_INVALID))
            continue
        path = directory + os.sep + SKILL_FILE_NAME
        if path_problem is not None:
            warnings.append(SkillWarning(path=path, reason=path_problem))
            continue
        try:
            skills.append(_summary(path, name, _read_skill_text(path)))
        except SkillError as exc:
            warnings.append(SkillWarning(path=path, reason=exc.reason))
    skills.sort(key=lambda s: (s.source, s.name, s.path))
    return SkillDiscovery(skills=tuple(skills), warnings=tuple(warnings))
