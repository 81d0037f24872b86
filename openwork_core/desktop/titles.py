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


def is_blank(text: str) -> bool:
    """True when ``text`` has no character a session list would draw (docs/api.md, ``PATCH``'s
    title "not blank"; a ``\\S`` pattern alone takes U+200B for a visible character)."""
    return all(unicodedata.category(char) in _INVISIBLE for char in text)


def derived_title(first_user_text: str | None) -> str | None:
    """The first non-blank line of the first user message, at most 80 characters."""
    if first_user_text is None:
        return None
    for line in first_user_text.splitlines():
        if not is_blank(line):
            return clip(" ".join(line.split()), TITLE_MAX_CHARS)
    return None


def preview(text: str | None) -> str | None:
    """A final text's first 200 characters, whitespace folded."""
    if text is None:
        return None
    folded = " ".join(text.split())
    return clip(folded, PREVIEW_MAX_CHARS) if folded else None
