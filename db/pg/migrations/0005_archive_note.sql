-- An archive record carries the signed checkpoint that ends the archived prefix (with its `archive` extension line),
-- so that verification trusts no archive record it cannot check against the installation's key (lib/audit/verify.ts).
-- swarm_archive_prefix takes that note and stores it with the cut; the old six-argument function is dropped, so nothing
-- archives without one. (The function does not check the signature: it has no key. Verification does, and fails on a
-- record whose note does not verify.)
ALTER TABLE "audit_archives" ADD COLUMN "note" text;
--> statement-breakpoint
DROP FUNCTION swarm_archive_prefix(text, bigint, text, bigint, text, text);
--> statement-breakpoint
CREATE FUNCTION swarm_archive_prefix(p_chain text, p_up_to_id bigint, p_head_hash text, p_rows bigint, p_file text, p_file_sha256 text, p_note text)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  found_hash text;
  first_id bigint;
  removed bigint;
BEGIN
  IF p_chain NOT IN ('permission_denials', 'security_events') THEN
    RAISE EXCEPTION 'swarm_archive_prefix: % is not an audit chain', p_chain USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF p_note IS NULL OR position(E'\narchive ' IN p_note) = 0 THEN
    RAISE EXCEPTION 'swarm_archive_prefix: an archive needs the signed checkpoint of its last row; nothing was removed' USING ERRCODE = 'invalid_parameter_value';
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
  INSERT INTO audit_archives (chain, up_to_id, head_hash, rows, file, file_sha256, archived_at, note)
    VALUES (p_chain, p_up_to_id, p_head_hash, removed, p_file, p_file_sha256, extract(epoch FROM clock_timestamp()), p_note);
  RETURN removed;
END
$$;
