"""Silent truncation (issue 14 point 1): reported prompt tokens far below the estimate."""

from __future__ import annotations

import pytest

from openwork_core.models.truncation import silently_truncated


@pytest.mark.parametrize(
    ("reported", "estimated", "truncated"),
    [
        (2_048, 40_000, True),  # Ollama's default window cut a 40k prompt
        (19_000, 40_000, True),
        (21_000, 40_000, False),  # within a factor of two: estimator noise
        (100, 900, False),  # too small to tell
        (None, 40_000, False),  # no usage reported
        (0, 40_000, False),
        (40_500, 40_000, False),
    ],
)
def test_only_a_report_far_below_the_estimate_is_a_truncation(
    reported: int | None, estimated: int, truncated: bool
) -> None:
    assert silently_truncated(reported, estimated) is truncated
