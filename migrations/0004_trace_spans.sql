-- 0004: best-effort diagnostic spans (storage.md §2: trace family). Never drive control flow.

CREATE TABLE trace_spans (
    id                      TEXT PRIMARY KEY CHECK (btrim(id) <> ''),
    trace_id                TEXT NOT NULL CHECK (btrim(trace_id) <> ''),
    session_id              TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    turn_id                 TEXT NULL,
    parent_span_id          TEXT NULL,
    kind                    TEXT NOT NULL CHECK (kind IN ('model_call', 'tool_call', 'compaction')),
    name                    TEXT NOT NULL CHECK (btrim(name) <> ''),
    status                  TEXT NOT NULL CHECK (
        status IN ('running', 'succeeded', 'failed', 'denied', 'cancelled', 'outcome_unknown')
        OR (kind = 'model_call' AND parent_span_id IS NOT NULL
            AND status IN ('degenerate', 'deterministic', 'input_overflow', 'transient', 'timeout'))),
    model_id                TEXT NULL,
    resolved_model_name     TEXT NULL,
    provider_request_id     TEXT NULL,
    provider_call_id        TEXT NULL,
    requested_tool_name     TEXT NULL,
    resolved_tool_name      TEXT NULL,
    attempt_count           INTEGER NULL CHECK (attempt_count IS NULL OR attempt_count >= 0),
    input_tokens            BIGINT NULL CHECK (input_tokens IS NULL OR input_tokens >= 0),
    output_tokens           BIGINT NULL CHECK (output_tokens IS NULL OR output_tokens >= 0),
    cached_input_tokens     BIGINT NULL CHECK (cached_input_tokens IS NULL OR cached_input_tokens >= 0),
    reasoning_tokens        BIGINT NULL CHECK (reasoning_tokens IS NULL OR reasoning_tokens >= 0),
    response_message_id     TEXT NULL REFERENCES messages (id) ON DELETE SET NULL,
    permission_wait_ms      BIGINT NULL CHECK (permission_wait_ms IS NULL OR permission_wait_ms >= 0),
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    ended_at                TIMESTAMPTZ NULL,
    error_code              TEXT NULL,
    error_message           TEXT NULL,
    attributes              JSONB NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(attributes) = 'object'),
    CONSTRAINT trace_spans_turn_fk FOREIGN KEY (turn_id, session_id)
        REFERENCES turns (id, session_id) ON DELETE CASCADE,
    CONSTRAINT trace_spans_tool_columns_only_on_tool_spans CHECK (
        kind = 'tool_call' OR (provider_call_id IS NULL AND requested_tool_name IS NULL
                               AND resolved_tool_name IS NULL AND permission_wait_ms IS NULL)),
    CONSTRAINT trace_spans_response_only_on_model_spans CHECK (
        kind = 'model_call' OR response_message_id IS NULL),
    CONSTRAINT trace_spans_model_never_denied CHECK (kind <> 'model_call' OR status <> 'denied'),
    CONSTRAINT trace_spans_end_after_start CHECK (ended_at IS NULL OR ended_at >= started_at)
);
CREATE INDEX idx_trace_spans_trace ON trace_spans (trace_id, started_at);
CREATE INDEX idx_trace_spans_session ON trace_spans (session_id, started_at DESC);
CREATE INDEX idx_trace_spans_turn ON trace_spans (turn_id, started_at) WHERE turn_id IS NOT NULL;
