-- 0001: sessions, turns, messages, providers (storage.md §2; timestamptz UTC per DESIGN.md §2).
-- Forward-only: never edit this file once applied; add 0002_… instead.

CREATE TABLE providers (
    id          TEXT PRIMARY KEY CHECK (btrim(id) <> '' AND position('/' in id) = 0),
    kind        TEXT NOT NULL CHECK (kind IN ('openai-chat', 'openai-responses', 'anthropic')),
    base_url    TEXT NULL CHECK (base_url IS NULL OR btrim(base_url) <> ''),
    api_key_env TEXT NULL CHECK (api_key_env IS NULL OR api_key_env ~ '^[A-Za-z_][A-Za-z0-9_]*$'),
    models      JSONB NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(models) = 'array'),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE sessions (
    id                  TEXT PRIMARY KEY CHECK (btrim(id) <> ''),
    title               TEXT NULL CHECK (title IS NULL OR btrim(title) <> ''),
    working_directory   TEXT NOT NULL CHECK (btrim(working_directory) <> ''),
    agent               TEXT NOT NULL DEFAULT 'default' CHECK (btrim(agent) <> ''),
    provider_id         TEXT NULL CHECK (provider_id IS NULL OR btrim(provider_id) <> ''),
    model_name          TEXT NULL CHECK (model_name IS NULL OR btrim(model_name) <> ''),
    status              TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_turn_at        TIMESTAMPTZ NULL,
    parent_session_id   TEXT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    task_name           TEXT NULL,
    agent_role          TEXT NULL,
    spawn_span_id       TEXT NULL,
    tool_result_pruned_through_sequence BIGINT NULL
        CHECK (tool_result_pruned_through_sequence IS NULL OR tool_result_pruned_through_sequence > 0),
    sandbox_mode        TEXT NOT NULL DEFAULT 'auto' CHECK (sandbox_mode IN ('auto', 'accept_edits')),
    reasoning_effort    TEXT NULL,
    CONSTRAINT sessions_subagent_fields_consistent CHECK (
        (parent_session_id IS NULL AND task_name IS NULL AND agent_role IS NULL)
        OR (parent_session_id IS NOT NULL AND task_name IS NOT NULL AND agent_role IS NOT NULL)),
    CONSTRAINT sessions_task_name_format CHECK (task_name IS NULL OR task_name ~ '^[a-z][a-z0-9_]{0,47}$'),
    CONSTRAINT sessions_spawn_not_self CHECK (parent_session_id IS NULL OR parent_session_id <> id)
);
CREATE INDEX idx_sessions_status_updated ON sessions (status, updated_at DESC, id);
CREATE UNIQUE INDEX uq_sessions_parent_task_name ON sessions (parent_session_id, task_name)
    WHERE parent_session_id IS NOT NULL;
CREATE INDEX idx_sessions_parent ON sessions (parent_session_id, created_at)
    WHERE parent_session_id IS NOT NULL;

CREATE TABLE turns (
    id                      TEXT PRIMARY KEY CHECK (btrim(id) <> ''),
    session_id              TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    client_request_id       TEXT NOT NULL CHECK (btrim(client_request_id) <> ''),
    sequence                BIGINT NOT NULL CHECK (sequence > 0),
    model_id                TEXT NULL,
    resolved_provider_id    TEXT NOT NULL CHECK (btrim(resolved_provider_id) <> ''),
    resolved_model_name     TEXT NOT NULL CHECK (btrim(resolved_model_name) <> ''),
    app_version             TEXT NOT NULL CHECK (btrim(app_version) <> ''),
    status                  TEXT NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'completed', 'failed', 'cancelled', 'interrupted')),
    model_call_count        INTEGER NOT NULL DEFAULT 0 CHECK (model_call_count >= 0),
    model_submission_count  INTEGER NOT NULL DEFAULT 0 CHECK (model_submission_count >= 0),
    tool_call_count         INTEGER NOT NULL DEFAULT 0 CHECK (tool_call_count >= 0),
    input_tokens            BIGINT NULL CHECK (input_tokens IS NULL OR input_tokens >= 0),
    output_tokens           BIGINT NULL CHECK (output_tokens IS NULL OR output_tokens >= 0),
    cached_input_tokens     BIGINT NULL CHECK (cached_input_tokens IS NULL OR cached_input_tokens >= 0),
    reasoning_tokens        BIGINT NULL CHECK (reasoning_tokens IS NULL OR reasoning_tokens >= 0),
    error_code              TEXT NULL,
    error_message           TEXT NULL,
    started_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    ended_at                TIMESTAMPTZ NULL,
    updated_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    plan_unfinished_step_count INTEGER NULL
        CONSTRAINT turns_plan_unfinished_non_negative
        CHECK (plan_unfinished_step_count IS NULL OR plan_unfinished_step_count >= 0),
    CONSTRAINT turns_submissions_cover_calls CHECK (model_submission_count >= model_call_count),
    CONSTRAINT turns_terminal_time_valid CHECK ((status = 'running') = (ended_at IS NULL)),
    CONSTRAINT turns_end_after_start CHECK (ended_at IS NULL OR ended_at >= started_at),
    CONSTRAINT turns_id_session UNIQUE (id, session_id),
    CONSTRAINT turns_session_sequence UNIQUE (session_id, sequence),
    CONSTRAINT turns_client_request UNIQUE (session_id, client_request_id)
);
CREATE UNIQUE INDEX uq_turns_one_running_per_session ON turns (session_id) WHERE status = 'running';
CREATE INDEX idx_turns_session_sequence ON turns (session_id, sequence DESC);

CREATE TABLE messages (
    id                      TEXT PRIMARY KEY CHECK (btrim(id) <> ''),
    session_id              TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    turn_id                 TEXT NULL,
    sequence                BIGINT NOT NULL CHECK (sequence > 0),
    role                    TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content                 JSONB NOT NULL CHECK (jsonb_typeof(content) = 'array'),
    content_format_version  SMALLINT NOT NULL DEFAULT 1 CHECK (content_format_version > 0),
    provider_call_id        TEXT NULL,
    tool_name               TEXT NULL,
    message_kind            TEXT NOT NULL DEFAULT 'normal'
        CHECK (message_kind IN ('normal', 'skill_instruction', 'agent_message', 'world_state')),
    created_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT messages_turn_session_fk FOREIGN KEY (turn_id, session_id)
        REFERENCES turns (id, session_id) ON DELETE CASCADE,
    CONSTRAINT messages_turn_required CHECK (turn_id IS NOT NULL OR role = 'system'),
    CONSTRAINT messages_tool_identity_valid CHECK (
        (role = 'tool') = (provider_call_id IS NOT NULL AND btrim(provider_call_id) <> ''
                           AND tool_name IS NOT NULL AND btrim(tool_name) <> '')),
    CONSTRAINT messages_session_sequence UNIQUE (session_id, sequence)
);
CREATE INDEX idx_messages_session_sequence ON messages (session_id, sequence);
CREATE UNIQUE INDEX uq_messages_tool_result ON messages (turn_id, provider_call_id) WHERE role = 'tool';
