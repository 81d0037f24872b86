-- 0007: what the desktop app reads (issue 16): a session list filtered by workspace and archived
-- state in a stable keyset order, bounded titles, and each checkpoint's Conversation tokens
-- before and after (the rewind targets' "tokens before and after"; NULL for older rows).

ALTER TABLE sessions
    ADD CONSTRAINT sessions_title_length CHECK (title IS NULL OR char_length(title) <= 200);

CREATE INDEX idx_sessions_roots_created
    ON sessions (created_at DESC, id DESC) WHERE parent_session_id IS NULL;
CREATE INDEX idx_sessions_roots_workspace
    ON sessions (working_directory, created_at DESC, id DESC) WHERE parent_session_id IS NULL;

ALTER TABLE conversation_compactions
    ADD COLUMN conversation_tokens_before BIGINT NULL
        CHECK (conversation_tokens_before IS NULL OR conversation_tokens_before >= 0),
    ADD COLUMN conversation_tokens_after BIGINT NULL
        CHECK (conversation_tokens_after IS NULL OR conversation_tokens_after >= 0);
