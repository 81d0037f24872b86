-- 0005: per-skill enablement (skills.md §6). No row or false = enabled; explicit false is kept;
-- orphan rows are allowed (the preference survives a skill's removal).

CREATE TABLE skill_status (
    name     TEXT PRIMARY KEY CHECK (btrim(name) <> ''),
    disabled BOOLEAN NOT NULL DEFAULT FALSE
);
