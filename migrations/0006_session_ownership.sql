-- 0006: one owner per session across daemons on one database (ownership issue).
-- A daemon registers itself and renews a heartbeat; a session is driven only by the daemon holding
-- its lease. Every write of a session's facts checks the writer's fencing epoch against this row
-- (locked FOR SHARE in the writing transaction), so a daemon paused past its lease writes nothing.

CREATE TABLE daemons (
    id            TEXT PRIMARY KEY CHECK (btrim(id) <> ''),
    url           TEXT NOT NULL,
    pid           INTEGER NOT NULL,
    host          TEXT NOT NULL,
    home          TEXT NOT NULL,
    started_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    heartbeat_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    stopped_at    TIMESTAMPTZ NULL
);

CREATE INDEX idx_daemons_home ON daemons (host, home) WHERE stopped_at IS NULL;

CREATE TABLE session_leases (
    session_id       TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    owner_daemon_id  TEXT NOT NULL REFERENCES daemons (id),
    epoch            BIGINT NOT NULL CHECK (epoch > 0),
    acquired_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at       TIMESTAMPTZ NOT NULL
);

CREATE INDEX idx_session_leases_owner ON session_leases (owner_daemon_id);
