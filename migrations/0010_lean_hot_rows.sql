-- 0010: less PostgreSQL work per model call (issue 13 §7; docs/architecture.md "What PostgreSQL
-- costs per model call"). Every guarantee stays; what goes is work that guarantees nothing more.
--
-- 1. Duplicate and unused indexes. idx_messages_session_sequence has the columns and order of the
--    messages_session_sequence unique constraint's own index (any scan can use that one), and no
--    query filters or orders trace_spans by trace_id. Each was one more index entry per row written.
DROP INDEX idx_messages_session_sequence;
DROP INDEX idx_trace_spans_trace;

-- 2. CHECK constraints in their shortest equivalent form. PostgreSQL rebuilds every CHECK
--    expression of a table from its stored text at each statement that writes the table (the
--    steady statement writes messages, turns and model_call_usage), which was about a third of the
--    backend CPU of that statement. `x IS NULL OR x >= 0` and `x >= 0` accept exactly the same rows
--    (a CHECK that is NULL passes), so each such constraint is re-created, same name, without the
--    NULL test. The ADD validates the existing rows once.
ALTER TABLE turns
    DROP CONSTRAINT turns_input_tokens_check,
    DROP CONSTRAINT turns_output_tokens_check,
    DROP CONSTRAINT turns_cached_input_tokens_check,
    DROP CONSTRAINT turns_reasoning_tokens_check,
    DROP CONSTRAINT turns_cache_write_tokens_check,
    DROP CONSTRAINT turns_plan_unfinished_non_negative,
    DROP CONSTRAINT turns_end_after_start,
    ADD CONSTRAINT turns_input_tokens_check CHECK (input_tokens >= 0),
    ADD CONSTRAINT turns_output_tokens_check CHECK (output_tokens >= 0),
    ADD CONSTRAINT turns_cached_input_tokens_check CHECK (cached_input_tokens >= 0),
    ADD CONSTRAINT turns_reasoning_tokens_check CHECK (reasoning_tokens >= 0),
    ADD CONSTRAINT turns_cache_write_tokens_check CHECK (cache_write_tokens >= 0),
    ADD CONSTRAINT turns_plan_unfinished_non_negative CHECK (plan_unfinished_step_count >= 0),
    ADD CONSTRAINT turns_end_after_start CHECK (ended_at >= started_at);

-- 3. model_call_usage names its turn and its session: one composite key to the turn (which names
--    its session) replaces the two single-column ones — one foreign-key lookup per model call
--    instead of two, and a usage row can no longer name a turn of another session. Deleting a
--    session still deletes its usage rows (through its turns).
ALTER TABLE model_call_usage
    DROP CONSTRAINT model_call_usage_input_tokens_check,
    DROP CONSTRAINT model_call_usage_cached_input_tokens_check,
    DROP CONSTRAINT model_call_usage_cache_write_tokens_check,
    DROP CONSTRAINT model_call_usage_output_tokens_check,
    DROP CONSTRAINT model_call_usage_reasoning_tokens_check,
    DROP CONSTRAINT model_call_usage_shared_prefix_bytes_check,
    DROP CONSTRAINT model_call_usage_cache_miss_cause_check,
    DROP CONSTRAINT model_call_usage_cache_miss_item_check,
    DROP CONSTRAINT model_call_usage_idle_seconds_check,
    ADD CONSTRAINT model_call_usage_input_tokens_check CHECK (input_tokens >= 0),
    ADD CONSTRAINT model_call_usage_cached_input_tokens_check CHECK (cached_input_tokens >= 0),
    ADD CONSTRAINT model_call_usage_cache_write_tokens_check CHECK (cache_write_tokens >= 0),
    ADD CONSTRAINT model_call_usage_output_tokens_check CHECK (output_tokens >= 0),
    ADD CONSTRAINT model_call_usage_reasoning_tokens_check CHECK (reasoning_tokens >= 0),
    ADD CONSTRAINT model_call_usage_shared_prefix_bytes_check CHECK (shared_prefix_bytes >= 0),
    ADD CONSTRAINT model_call_usage_cache_miss_cause_check CHECK (cache_miss_cause IN (
        'stable_prefix_changed', 'prefix_changed', 'no_cache_reported', 'idle_expired',
        'unexplained')),
    ADD CONSTRAINT model_call_usage_cache_miss_item_check CHECK (cache_miss_item >= 0),
    ADD CONSTRAINT model_call_usage_idle_seconds_check CHECK (idle_seconds >= 0),
    DROP CONSTRAINT model_call_usage_turn_id_fkey,
    DROP CONSTRAINT model_call_usage_session_id_fkey,
    ADD CONSTRAINT model_call_usage_turn_session_fk FOREIGN KEY (turn_id, session_id)
        REFERENCES turns (id, session_id) ON DELETE CASCADE;
