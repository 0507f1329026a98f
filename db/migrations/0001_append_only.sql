-- The audit trail and the flag history are append-only: the database refuses UPDATE and DELETE on them,
-- whichever connection asks.
CREATE TRIGGER permission_denials_no_update BEFORE UPDATE ON permission_denials
BEGIN SELECT RAISE(ABORT, 'permission_denials is append-only: UPDATE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER permission_denials_no_delete BEFORE DELETE ON permission_denials
BEGIN SELECT RAISE(ABORT, 'permission_denials is append-only: DELETE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER flag_changes_no_update BEFORE UPDATE ON flag_changes
BEGIN SELECT RAISE(ABORT, 'flag_changes is append-only: UPDATE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER flag_changes_no_delete BEFORE DELETE ON flag_changes
BEGIN SELECT RAISE(ABORT, 'flag_changes is append-only: DELETE is refused'); END;
--> statement-breakpoint
-- Approvals are never deleted either; their state changes are conditional updates.
CREATE TRIGGER approvals_no_delete BEFORE DELETE ON approvals
BEGIN SELECT RAISE(ABORT, 'approvals are kept: DELETE is refused'); END;
