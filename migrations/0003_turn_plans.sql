-- 0003: the latest update_plan snapshot of a turn (update-plan.md §5).

CREATE TABLE turn_plans (
    turn_id     TEXT PRIMARY KEY REFERENCES turns (id) ON DELETE CASCADE,
    explanation TEXT NULL,
    steps       JSONB NOT NULL CONSTRAINT turn_plans_steps_is_array CHECK (jsonb_typeof(steps) = 'array'),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX turn_plans_turn_id_idx ON turn_plans (turn_id);
