-- 0009: per-provider settings (issue 14 points 6 and 8): timeouts, retries, window and output
-- overrides and the wire options, as one JSON object (``ProviderSettings``; absent keys take their
-- defaults). API keys are never stored here (they live in OPENWORK_HOME/run/provider-keys.json).
-- 0008 is reserved for another change; the runner accepts the gap (storage/migrate.py).

ALTER TABLE providers
    ADD COLUMN settings JSONB NOT NULL DEFAULT '{}'::jsonb
        CHECK (jsonb_typeof(settings) = 'object');
