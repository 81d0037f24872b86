"""The session's record of automatic compactions (actor memory) for the loop breaker."""

from __future__ import annotations

from dataclasses import dataclass, field

from openwork_core.session.compaction.policy import CompactionEffect
from openwork_core.session.compaction.run import CompactionResult


@dataclass(slots=True)
class CompactionHistory:
    """The session's automatic compactions (actor memory), for the loop breaker."""

    automatic: list[CompactionEffect] = field(default_factory=list)
    reload_required: bool = False

    def record(self, result: CompactionResult) -> None:
        self.automatic.append(
            CompactionEffect(before_tokens=result.before_tokens, after_tokens=result.after_tokens)
        )
