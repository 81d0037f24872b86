-- Issue 14 points 5 and 9: what each provider submission really cost and how well it used the
-- provider's prompt cache. One row per submission (a resubmission after an overflow is its own
-- row), written in the same transaction as the assistant message it produced; the turn's own
-- counters gain the cache writes.

ALTER TABLE turns
    ADD COLUMN cache_write_tokens BIGINT NULL
        CHECK (cache_write_tokens IS NULL OR cache_write_tokens >= 0);

CREATE TABLE model_call_usage (
    turn_id                     TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    model_call                  INTEGER NOT NULL CHECK (model_call >= 1),
    submission                  INTEGER NOT NULL CHECK (submission >= 1),
    session_id                  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    message_id                  TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    provider_id                 TEXT NOT NULL CHECK (btrim(provider_id) <> ''),
    model_name                  TEXT NOT NULL CHECK (btrim(model_name) <> ''),
    -- as the provider reported them (NULL: not reported)
    input_tokens                BIGINT NULL CHECK (input_tokens IS NULL OR input_tokens >= 0),
    cached_input_tokens         BIGINT NULL
        CHECK (cached_input_tokens IS NULL OR cached_input_tokens >= 0),
    cache_write_tokens          BIGINT NULL
        CHECK (cache_write_tokens IS NULL OR cache_write_tokens >= 0),
    output_tokens               BIGINT NULL CHECK (output_tokens IS NULL OR output_tokens >= 0),
    reasoning_tokens            BIGINT NULL
        CHECK (reasoning_tokens IS NULL OR reasoning_tokens >= 0),
    -- our side: the context engine's estimate and the silent-truncation check
    estimated_input_tokens      BIGINT NOT NULL CHECK (estimated_input_tokens >= 0),
    input_truncation_suspected  BOOLEAN NOT NULL DEFAULT false,
    -- cache diagnostics: the stable prefix (system + tools) and what the request shared with the
    -- session's previous call (NULL when no previous call is known to this process)
    stable_prefix_hash          TEXT NOT NULL CHECK (btrim(stable_prefix_hash) <> ''),
    request_bytes               BIGINT NOT NULL CHECK (request_bytes >= 0),
    shared_prefix_bytes         BIGINT NULL
        CHECK (shared_prefix_bytes IS NULL OR shared_prefix_bytes >= 0),
    cache_miss_cause            TEXT NULL CHECK (cache_miss_cause IS NULL OR cache_miss_cause IN (
        'stable_prefix_changed', 'prefix_changed', 'no_cache_reported', 'idle_expired',
        'unexplained')),
    cache_miss_item             INTEGER NULL CHECK (cache_miss_item IS NULL OR cache_miss_item >= 0),
    idle_seconds                DOUBLE PRECISION NULL
        CHECK (idle_seconds IS NULL OR idle_seconds >= 0),
    created_at                  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (turn_id, model_call, submission)
);

CREATE INDEX model_call_usage_by_session ON model_call_usage (session_id, created_at DESC);
