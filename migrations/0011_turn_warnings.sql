-- 0011: issue 24 point 4 — what a turn was warned about: a window too small for the request,
-- input the provider probably dropped, tools the server's chat template does not render. One row
-- per code per turn (the first time the turn raised it), written as it is raised, read back by
-- GET /v1/sessions/{sid}/turns/{tid} as the turn's `warnings`. Advice only: a turn never waits on
-- it, and a failed write is logged, never the turn's fate.
CREATE TABLE turn_warnings (
    turn_id     TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    code        TEXT NOT NULL CHECK (btrim(code) <> ''),
    message     TEXT NOT NULL CHECK (btrim(message) <> ''),
    model_call  INTEGER NULL CHECK (model_call >= 1),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (turn_id, code)
);
