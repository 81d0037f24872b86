-- 0012: the user's MCP servers set through the API (issue 27; docs/mcp.md). Each row is one
-- server's configuration WITHOUT secrets: the names of its environment variables and headers are
-- here, their values are in OPENWORK_HOME/run/mcp-secrets.json (0600), and a bearer token is only
-- named (bearer_token_env_var). Servers of the TOML config file are never stored.
-- 0011 is reserved for another change; the runner accepts the gap (storage/migrate.py).

CREATE TABLE mcp_servers (
    name TEXT PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
    config JSONB NOT NULL CHECK (jsonb_typeof(config) = 'object'),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- A changed Tool Surface (a server's tools/list_changed) is a cache miss of its own cause.
ALTER TABLE model_call_usage
    DROP CONSTRAINT model_call_usage_cache_miss_cause_check,
    ADD CONSTRAINT model_call_usage_cache_miss_cause_check CHECK (cache_miss_cause IN (
        'stable_prefix_changed', 'tool_surface_changed', 'prefix_changed', 'no_cache_reported',
        'idle_expired', 'unexplained'));
