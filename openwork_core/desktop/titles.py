"""Session titles and text previews (issue 16 point 1–2): pure."""

from __future__ import annotations

import unicodedata

TITLE_MAX_CHARS = 80
PREVIEW_MAX_CHARS = 200
_ELLIPSIS = "…"


def clip(text: str, limit: int) -> str:
    """``text`` when it fits, else its first ``limit - 1`` characters and an ellipsis."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + _ELLIPSIS


_INVISIBLE = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})
"""Unicode categories that draw nothing in a session list: controls, format characters (the
zero-width space U+200B, joiners, U+2060, the BOM U+FEFF, bidi marks) and separators."""


def _drawn(char: str) -> bool:
    return unicodedata.category(char) not in _INVISIBLE


def is_blank(text: str) -> bool:
    """True when ``text`` has no character a session list would draw (docs/api.md, ``PATCH``'s
    title "not blank"; a ``\\S`` pattern alone takes U+200B for a visible character)."""
    return not any(_drawn(char) for char in text)


def derived_title(first_user_text: str | None) -> str | None:
    """The first non-blank line of the first user message, from its first to its last drawn
    character, whitespace folded, at most 80 characters."""
    if first_user_text is None:
        return None
    for line in first_user_text.splitlines():
        span = _drawn_span(line.strip())
        if span:
            return clip(" ".join(span.split()), TITLE_MAX_CHARS)
    return None


def _drawn_span(line: str) -> str:
    """``line`` from its first to its last drawn character ("" when it has none); only the
    invisible characters at its ends are looked at one by one."""
    start = next((index for index, char in enumerate(line) if _drawn(char)), len(line))
    end = len(line)
    while end > start and not _drawn(line[end - 1]):
        end -= 1
    return line[start:end]


def preview(text: str | None) -> str | None:
    """A final text's first 200 characters, whitespace folded."""
    if text is None:
        return None
    folded = " ".join(text.split())
    return clip(folded, PREVIEW_MAX_CHARS) if folded else None
