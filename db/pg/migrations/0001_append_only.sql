-- The audit trail and the evidence around it are append-only on PostgreSQL too: the database refuses UPDATE, DELETE
-- and TRUNCATE on them, whichever connection asks. Approvals change state by conditional updates but are never
-- removed. Only the owner of the tables can drop or disable these triggers: run the application as a role that does
-- not own them (docs/deployment.md), and an application bug or a stolen application password cannot rewrite history.
CREATE FUNCTION swarm_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: % is refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
--> statement-breakpoint
CREATE TRIGGER permission_denials_no_change BEFORE UPDATE OR DELETE ON permission_denials FOR EACH ROW EXECUTE FUNCTION swarm_refuse_change();
--> statement-breakpoint
CREATE TRIGGER permission_denials_no_truncate BEFORE TRUNCATE ON permission_denials FOR EACH STATEMENT EXECUTE FUNCTION swarm_refuse_change();
--> statement-breakpoint
CREATE TRIGGER security_events_no_change BEFORE UPDATE OR DELETE ON security_events FOR EACH ROW EXECUTE FUNCTION swarm_refuse_change();
--> statement-breakpoint
CREATE TRIGGER security_events_no_truncate BEFORE TRUNCATE ON security_events FOR EACH STATEMENT EXECUTE FUNCTION swarm_refuse_change();
--> statement-breakpoint
CREATE TRIGGER flag_changes_no_change BEFORE UPDATE OR DELETE ON flag_changes FOR EACH ROW EXECUTE FUNCTION swarm_refuse_change();
--> statement-breakpoint
CREATE TRIGGER flag_changes_no_truncate BEFORE TRUNCATE ON flag_changes FOR EACH STATEMENT EXECUTE FUNCTION swarm_refuse_change();
--> statement-breakpoint
CREATE TRIGGER audit_checkpoints_no_change BEFORE UPDATE OR DELETE ON audit_checkpoints FOR EACH ROW EXECUTE FUNCTION swarm_refuse_change();
--> statement-breakpoint
CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON audit_checkpoints FOR EACH STATEMENT EXECUTE FUNCTION swarm_refuse_change();
--> statement-breakpoint
CREATE TRIGGER audit_archives_no_change BEFORE UPDATE OR DELETE ON audit_archives FOR EACH ROW EXECUTE FUNCTION swarm_refuse_change();
--> statement-breakpoint
CREATE TRIGGER audit_archives_no_truncate BEFORE TRUNCATE ON audit_archives FOR EACH STATEMENT EXECUTE FUNCTION swarm_refuse_change();
--> statement-breakpoint
CREATE TRIGGER policy_revisions_no_change BEFORE UPDATE OR DELETE ON policy_revisions FOR EACH ROW EXECUTE FUNCTION swarm_refuse_change();
--> statement-breakpoint
CREATE TRIGGER policy_revisions_no_truncate BEFORE TRUNCATE ON policy_revisions FOR EACH STATEMENT EXECUTE FUNCTION swarm_refuse_change();
--> statement-breakpoint
CREATE TRIGGER approvals_no_delete BEFORE DELETE ON approvals FOR EACH ROW EXECUTE FUNCTION swarm_refuse_change();
--> statement-breakpoint
CREATE TRIGGER approvals_no_truncate BEFORE TRUNCATE ON approvals FOR EACH STATEMENT EXECUTE FUNCTION swarm_refuse_change();
