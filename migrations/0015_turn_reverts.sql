-- 0015: issue 26 point 3 — reverting a turn and every later one. A revert hides the turns whose
-- sequence is in [from_turn_sequence, through_turn_sequence] from the Conversation (their rows and
-- messages stay; the turn list marks them `reverted`) while `unreverted_at` is NULL;
-- `undone_change_ids` are the file changes it undid (an unrevert reapplies them).
CREATE TABLE turn_reverts (
    id                      TEXT PRIMARY KEY CHECK (btrim(id) <> ''),
    session_id              TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    from_turn_sequence      BIGINT NOT NULL CHECK (from_turn_sequence > 0),
    through_turn_sequence   BIGINT NOT NULL CHECK (through_turn_sequence >= from_turn_sequence),
    undone_change_ids       JSONB NOT NULL DEFAULT '[]'::jsonb
        CHECK (jsonb_typeof(undone_change_ids) = 'array'),
    created_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    unreverted_at           TIMESTAMPTZ NULL
);
CREATE INDEX idx_turn_reverts_session ON turn_reverts (session_id, created_at DESC);
