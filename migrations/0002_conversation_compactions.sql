-- 0002: compaction checkpoints (storage.md §2, compaction.md §6). Messages are never deleted:
-- a checkpoint marks which span a summary replaces.

CREATE TABLE conversation_compactions (
    id                                  TEXT PRIMARY KEY CHECK (btrim(id) <> ''),
    session_id                          TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    sequence                            BIGINT NOT NULL CHECK (sequence > 0),
    through_message_sequence            BIGINT NOT NULL CHECK (through_message_sequence >= 0),
    replaced_through_message_sequence   BIGINT NOT NULL,
    source_message_count                INTEGER NOT NULL CHECK (source_message_count > 0),
    checkpoint_format_version           SMALLINT NOT NULL DEFAULT 0,
    kind                                TEXT NOT NULL DEFAULT 'manual'
        CHECK (kind IN ('manual', 'threshold', 'overflow', 'rewind')),
    summary_format_version              SMALLINT NOT NULL DEFAULT 0,
    last_user_message_id                TEXT NULL REFERENCES messages (id),
    last_user_message_sequence          BIGINT NULL,
    resolved_model_name                 TEXT NOT NULL CHECK (btrim(resolved_model_name) <> ''),
    summary                             TEXT NOT NULL CHECK (btrim(summary) <> ''),
    runtime_state                       JSONB NOT NULL
        DEFAULT '{"schemaVersion":1,"editedPaths":[],"extensions":{},"warnings":[]}'::jsonb
        CHECK (jsonb_typeof(runtime_state) = 'object'),
    runtime_reminder_format_version     SMALLINT NOT NULL DEFAULT 1,
    runtime_reminder                    TEXT NOT NULL DEFAULT E'<system_reminder format_version="1">\nNo additional durable runtime state was recorded at compaction time.\n</system_reminder>'
        CHECK (btrim(runtime_reminder) <> ''),
    trigger_turn_id                     TEXT NULL,
    parent_compaction_id                TEXT NULL,
    input_tokens                        BIGINT NULL CHECK (input_tokens IS NULL OR input_tokens >= 0),
    output_tokens                       BIGINT NULL CHECK (output_tokens IS NULL OR output_tokens >= 0),
    created_at                          TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT conversation_compactions_install_after_fact
        CHECK (replaced_through_message_sequence >= through_message_sequence),
    CONSTRAINT conversation_compactions_last_user_pair CHECK (
        (last_user_message_id IS NULL) = (last_user_message_sequence IS NULL)),
    CONSTRAINT conversation_compactions_last_user_within_fact CHECK (
        last_user_message_sequence IS NULL OR last_user_message_sequence <= through_message_sequence),
    CONSTRAINT conversation_compactions_trigger_turn_by_kind CHECK (
        (kind IN ('threshold', 'overflow')) = (trigger_turn_id IS NOT NULL)),
    CONSTRAINT conversation_compactions_parent_by_kind CHECK (
        (kind = 'rewind') = (parent_compaction_id IS NOT NULL)),
    CONSTRAINT conversation_compactions_session_sequence UNIQUE (session_id, sequence),
    CONSTRAINT conversation_compactions_id_session UNIQUE (id, session_id),
    CONSTRAINT conversation_compactions_trigger_turn_fk FOREIGN KEY (trigger_turn_id, session_id)
        REFERENCES turns (id, session_id) ON DELETE CASCADE,
    CONSTRAINT conversation_compactions_parent_fk FOREIGN KEY (parent_compaction_id, session_id)
        REFERENCES conversation_compactions (id, session_id)
);
CREATE INDEX idx_conversation_compactions_session_sequence
    ON conversation_compactions (session_id, sequence DESC);
