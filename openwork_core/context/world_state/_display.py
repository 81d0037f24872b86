"""How file names and paths appear in model-visible text: one line each, always valid UTF-8."""

from __future__ import annotations

import re

_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _escape_control(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def display_name(text: str) -> str:
    """Undecodable bytes (surrogate escapes from ``os`` APIs) become ``\\xNN``, and so do control
    characters, so a name can never break a line or the tag structure."""
    if text.isprintable():
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that no os API produced
        raw = text.encode("utf-8", "backslashreplace")
    safe = raw.decode("utf-8", "backslashreplace")
    return _CONTROL_RE.sub(_escape_control, safe)
