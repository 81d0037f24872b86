-- 0014: issue 26 point 1 — input a client added to a running turn (a steer). The row commits
-- before the 202 and carries the steer's user messages as they will be written; the runner
-- writes them into `messages` (as user messages of that turn, under the ids kept here) at the
-- turn's next model-call boundary, after every tool result of the step in progress, or at the
-- turn's end. `client_request_id` is the steer's idempotency key, unique in its session.
CREATE TABLE turn_steers (
    id                  TEXT PRIMARY KEY CHECK (btrim(id) <> ''),
    session_id          TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    turn_id             TEXT NOT NULL,
    client_request_id   TEXT NOT NULL CHECK (btrim(client_request_id) <> ''),
    messages            JSONB NOT NULL CHECK (jsonb_typeof(messages) = 'array'),
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT turn_steers_turn_fk FOREIGN KEY (turn_id, session_id)
        REFERENCES turns (id, session_id) ON DELETE CASCADE,
    CONSTRAINT turn_steers_client_request UNIQUE (session_id, client_request_id)
);
