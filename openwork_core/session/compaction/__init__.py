"""Compaction (compaction.md): summary, runtime state and reminder, the compacted view,
checkpoints, pruning watermark, rewind and the trigger policy. Storage lives in
``openwork_core.storage.compaction_records`` (the PostgreSQL implementation of its storage:
``openwork_core.storage.postgres.compactions``)."""

__all__: list[str] = []
