-- Retention on PostgreSQL: `swarm audit archive` removes the oldest rows of a chain, after writing them to a signed
-- bundle, through swarm_archive_prefix() only. The function runs as the owner of the tables (SECURITY DEFINER; the
-- migrations run as that owner) and is the one way past the append-only triggers: it removes a prefix of one chain up
-- to a row whose hash the caller names (the head the bundle signed), exactly as many rows as the bundle holds, and
-- records the cut in audit_archives (append-only itself) in the same transaction, so that verification starts from it.
-- The triggers let a DELETE through only when it runs as the tables' owner *and* below the bound that function set for
-- this transaction: the application role can call the function, and nothing else; it cannot remove a row from the
-- middle, the newest rows, or any row without the record of it. (A role that owns the tables, or a superuser, could
-- drop the triggers anyway: run the application as a role that does not own them.) Installations that want archives
-- only from an operator's role revoke EXECUTE on swarm_archive_prefix from PUBLIC and grant it to that role.
CREATE FUNCTION swarm_refuse_change_unless_archived() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  bound text;
BEGIN
  IF TG_OP = 'DELETE' THEN
    bound := current_setting('swarm.archive_' || TG_TABLE_NAME, true);
    IF bound ~ '^[0-9]+$' AND OLD.id <= bound::bigint
       AND current_user = (SELECT pg_get_userbyid(c.relowner) FROM pg_catalog.pg_class c WHERE c.oid = TG_RELID) THEN
      RETURN OLD;
    END IF;
  END IF;
  RAISE EXCEPTION '% is append-only: % is refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
--> statement-breakpoint
DROP TRIGGER permission_denials_no_change ON permission_denials;
--> statement-breakpoint
CREATE TRIGGER permission_denials_no_change BEFORE UPDATE OR DELETE ON permission_denials FOR EACH ROW EXECUTE FUNCTION swarm_refuse_change_unless_archived();
--> statement-breakpoint
DROP TRIGGER security_events_no_change ON security_events;
--> statement-breakpoint
CREATE TRIGGER security_events_no_change BEFORE UPDATE OR DELETE ON security_events FOR EACH ROW EXECUTE FUNCTION swarm_refuse_change_unless_archived();
--> statement-breakpoint
CREATE FUNCTION swarm_archive_prefix(p_chain text, p_up_to_id bigint, p_head_hash text, p_rows bigint, p_file text, p_file_sha256 text)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  found_hash text;
  first_id bigint;
  removed bigint;
BEGIN
  IF p_chain NOT IN ('permission_denials', 'security_events') THEN
    RAISE EXCEPTION 'swarm_archive_prefix: % is not an audit chain', p_chain USING ERRCODE = 'invalid_parameter_value';
  END IF;
  EXECUTE format('SELECT row_hash FROM %I WHERE id = $1', p_chain) INTO found_hash USING p_up_to_id;
  IF found_hash IS NULL OR found_hash <> p_head_hash THEN
    RAISE EXCEPTION 'swarm_archive_prefix: row % of % is not the head the archive signed; nothing was removed', p_up_to_id, p_chain USING ERRCODE = 'invalid_parameter_value';
  END IF;
  EXECUTE format('SELECT min(id) FROM %I', p_chain) INTO first_id;
  IF p_up_to_id - first_id + 1 <> p_rows THEN
    RAISE EXCEPTION 'swarm_archive_prefix: % holds % rows up to %, the archive %; nothing was removed', p_chain, p_up_to_id - first_id + 1, p_up_to_id, p_rows USING ERRCODE = 'invalid_parameter_value';
  END IF;
  PERFORM set_config('swarm.archive_' || p_chain, p_up_to_id::text, true);
  EXECUTE format('DELETE FROM %I WHERE id <= $1', p_chain) USING p_up_to_id;
  GET DIAGNOSTICS removed = ROW_COUNT;
  PERFORM set_config('swarm.archive_' || p_chain, '', true);
  IF removed <> p_rows THEN
    RAISE EXCEPTION 'swarm_archive_prefix: % rows of % removed, the archive holds %; nothing was removed', removed, p_chain, p_rows USING ERRCODE = 'invalid_parameter_value';
  END IF;
  INSERT INTO audit_archives (chain, up_to_id, head_hash, rows, file, file_sha256, archived_at)
    VALUES (p_chain, p_up_to_id, p_head_hash, removed, p_file, p_file_sha256, extract(epoch FROM clock_timestamp()));
  RETURN removed;
END
$$;
