"""bash's live output (issue 15 point 5; tools.md §4 progress, §7 bash): throttled, bounded
per flush, in arrival order before the result; the final result does not depend on it."""

from __future__ import annotations

import json
import re

from openwork_tools.builtin.live_output import MAX_FLUSH_CHARS, bounded, omitted_marker
from openwork_tools.context import StderrProgress, StdoutProgress, ToolProgress
from openwork_tools.registry import FinalizedToolset
from tests.support.tools import call_ctx

STATUS_LINE = re.compile(r"\[exit 0; duration \d+ ms\]$")


async def _run(toolset: FinalizedToolset, command: str, sink: list[ToolProgress] | None) -> str:
    ctx = call_ctx(progress=sink.append) if sink is not None else call_ctx()
    result = await toolset.call("bash", json.dumps({"command": command}), ctx)
    return STATUS_LINE.sub("", result.text)


async def test_a_burst_of_output_arrives_in_bounded_updates_with_the_latest_output_last(
    toolset: FinalizedToolset,
) -> None:
    """Each update carries at most MAX_FLUSH_CHARS (+ the marker of what was not shown live)."""
    seen: list[ToolProgress] = []
    command = "for i in $(seq 1 20000); do echo line-$i; done"
    text = await _run(toolset, command, seen)
    chunks = [p.chunk for p in seen if isinstance(p, StdoutProgress)]
    assert chunks
    limit = MAX_FLUSH_CHARS + len(omitted_marker(10**9))
    assert all(len(chunk) <= limit for chunk in chunks)
    assert "".join(chunks).endswith("line-19999\nline-20000\n")
    assert text.startswith("line-1\n") and "line-20000\n" in text


async def test_the_result_is_the_same_with_or_without_a_progress_sink(
    toolset: FinalizedToolset,
) -> None:
    """tools.md §4: progress never changes the result. One stream per command: how two pipes'
    chunks interleave depends on the scheduler, not on the sink."""
    for command in ("echo out; printf 'x%.0s' $(seq 1 3000); echo", "echo err >&2; seq 1 500 >&2"):
        with_sink = await _run(toolset, command, [])
        without = await _run(toolset, command, None)
        assert with_sink == without


async def test_stdout_and_stderr_progress_keep_their_kind(toolset: FinalizedToolset) -> None:
    """tools.md §4: Stdout{chunk} | Stderr{chunk}; within a stream, arrival order."""
    seen: list[ToolProgress] = []
    await _run(toolset, "echo one; echo two >&2; echo three", seen)
    out = "".join(p.chunk for p in seen if isinstance(p, StdoutProgress))
    err = "".join(p.chunk for p in seen if isinstance(p, StderrProgress))
    assert (out, err) == ("one\nthree\n", "two\n")


def test_bounded_keeps_the_latest_characters_and_says_how_many_were_dropped() -> None:
    segments = [("stdout", "a" * 10), ("stdout", "b" * 10), ("stderr", "c" * 10)]
    assert bounded(segments, 100) == [("stdout", "a" * 10 + "b" * 10), ("stderr", "c" * 10)]  # type: ignore[arg-type]
    assert bounded(segments, 15) == [  # type: ignore[arg-type]
        ("stdout", omitted_marker(15) + "b" * 5),
        ("stderr", "c" * 10),
    ]
    assert bounded(segments, 4) == [("stderr", omitted_marker(26) + "c" * 4)]  # type: ignore[arg-type]
