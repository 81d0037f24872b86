-- 0013: a session's lease epoch never goes back (issue 25 point 2). The lease row is deleted when
-- its owner gives it back, which used to restart the next owner's epoch at 1; the session row now
-- keeps the last epoch handed out, and taking the lease raises it. An actor numbers its updates
-- above every earlier owner's from it (session/updates.py `sequence_floor`): update sequences
-- never go back for the session's lifetime, across restarts and takeovers.
--
-- Existing sessions start at epoch 1 at least (or their live lease's epoch): the next owner's
-- sequences are above the ones numbered from 1 before this migration.
ALTER TABLE sessions ADD COLUMN lease_epoch BIGINT NOT NULL DEFAULT 0;

UPDATE sessions s SET lease_epoch = GREATEST(1, COALESCE(
    (SELECT l.epoch FROM session_leases l WHERE l.session_id = s.id), 0));
