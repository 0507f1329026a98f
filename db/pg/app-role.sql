-- The application's role on PostgreSQL: what the servers need, and nothing that could rewrite history.
-- Run as the owner of the tables after `npx swarm db migrate` (which runs as that owner), and again after each
-- upgrade that adds tables:  psql "$OWNER_URL" -v app_role=swarm_app -f db/pg/app-role.sql
-- The role itself is created once by an administrator:  CREATE ROLE swarm_app LOGIN PASSWORD '…';
-- See docs/deployment.md. The servers then connect as this role (SWARM_DB=postgres://swarm_app:…@host/db).
\set ON_ERROR_STOP on

GRANT USAGE ON SCHEMA public TO :"app_role";
-- The servers check at start that every migration is applied; only the owner applies them.
GRANT USAGE ON SCHEMA drizzle TO :"app_role";
GRANT SELECT ON drizzle.__drizzle_migrations TO :"app_role";

-- Read everything, append everywhere.
GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO :"app_role";
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO :"app_role";

-- State that changes (never the audit trail, its checkpoints and archives, the revisions or the flag history: their
-- triggers refuse UPDATE and DELETE whoever asks, and this role does not own them, so it cannot drop the triggers).
GRANT UPDATE ON approvals, approval_votes, flag_overrides, users, api_tokens, sessions, notification_deliveries,
  permission_denial_daily_counts, permission_denial_rollup_state, login_attempts, policy_proposals TO :"app_role";
GRANT DELETE ON flag_overrides, sessions, hook_rate_calls, login_attempts, sso_logout_tokens TO :"app_role";

-- Archiving the oldest rows is an operator's act, from the owner's role: `npx swarm audit archive --db "$OWNER_URL"`.
REVOKE EXECUTE ON FUNCTION swarm_archive_prefix(text, bigint, text, bigint, text, text, text) FROM PUBLIC;
