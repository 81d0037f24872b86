"""Silent truncation (issue 14 point 1): a server that cuts the prompt to fit its window instead
of refusing it (Ollama by default, some proxies) reports far fewer prompt tokens than were sent.
Our estimate is conservative but not off by half, so a report below ``TRUNCATION_RATIO`` of the
estimate, and at least ``TRUNCATION_MIN_GAP`` tokens short, is a truncation. Pure."""

from __future__ import annotations

TRUNCATION_RATIO = 0.5
TRUNCATION_MIN_GAP = 1_024


def silently_truncated(reported_input_tokens: int | None, estimated_input_tokens: int) -> bool:
    if reported_input_tokens is None or reported_input_tokens <= 0:
        return False  # no usage reported: nothing to compare
    gap = estimated_input_tokens - reported_input_tokens
    return (
        gap >= TRUNCATION_MIN_GAP
        and reported_input_tokens < estimated_input_tokens * TRUNCATION_RATIO
    )
