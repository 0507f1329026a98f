/** The audit trail's own routes: the security events, and verifying the whole trail now. */
import { keyDirFor, trustedVerifierKeys } from '@/lib/audit/trail/checkpoints';
import { recordAuditRead } from '@/lib/audit/reads';
import { eventToJson } from '@/lib/audit/security-events';
import type { Failure, VerifyReport } from '@/lib/audit/trail/verify';
import { configuredWitnessed, signedSizes, type WitnessedCheckpoint } from '@/lib/audit/trail/witness';
import { requireRole, route } from '../route';
import { eventQuerySchema } from '../schemas';
import { messageOf } from '@/lib/errors';

/**
 * Security events, newest first: `since` (seconds back) or `from`/`to`, `type` (exact, or the family before the first
 * dot: `auth` matches `auth.*`), `exclude_type` (the same, left out: the audit page sends `decision`), `actor`, `outcome`, `decision_id`, `limit`, `cursor` (the previous page's next_cursor).
 */
export const listSecurityEvents = route({ role: requireRole('auditor'), query: eventQuerySchema }, async ({ app, query, principal, ip }) => {
  await recordAuditRead(app, { principal, what: 'security_events', filter: { ...query, cursor: undefined, limit: undefined }, ip });
  const { exclude_type: excludeType, decision_id: decisionId, ...filter } = query;
  const page = await app.securityEvents.list({ ...filter, excludeType, decisionId });
  return { events: page.rows.map(eventToJson), next_cursor: page.nextCursor };
});

/**
 * Run the verification of the audit trail now (both hash chains, every signed checkpoint) and answer its result. The
 * database is read through a read-only connection; the verification is itself recorded (audit.verified).
 */
export const verifyAuditTrail = route({ role: requireRole('auditor') }, async ({ app, principal, ip }) => {
  const path = app.options.dbPath;
  const key = trustedVerifierKeys(keyDirFor(path, app.env), app.env);
  // A witness folder that cannot be read is a failed verification, said as such: never a 500, never skipped.
  let witnessed: WitnessedCheckpoint[] = [];
  let witnessFailure: Failure | undefined;
  try {
    witnessed = configuredWitnessed(app.env);
  } catch (error) {
    witnessFailure = { table: 'witness', id: 0, problem: 'witness unreadable', message: `a witness folder of SWARM_AUDIT_WITNESSES cannot be read: ${messageOf(error)}` };
  }
  // What the key folder remembers signing: rows up to there have hashes, whatever the database says now.
  const signedUpTo = signedSizes(keyDirFor(path, app.env), path);
  let report: VerifyReport = await app.verifyAudit(key, { witnessed, signedUpTo });
  if (witnessFailure) report = { ...report, ok: false, failures: [...report.failures, witnessFailure] };
  const checkedAt = Date.now() / 1000;
  await app.recorder.record({
    kind: 'audit',
    type: 'audit.verified',
    actor: principal.id,
    actorRole: principal.role,
    outcome: report.ok ? 'succeeded' : 'failed',
    ip: ip ?? null,
    detail: { failures: report.failures, chains: report.chains.map((c) => ({ chain: c.chain, rows: c.rowsChecked, head: c.headHash })) },
  });
  return {
    ok: report.ok,
    checked_at: checkedAt,
    key: report.keyUsed,
    chains: report.chains.map((c) => ({
      chain: c.chain,
      rows_checked: c.rowsChecked,
      legacy_rows: c.legacyRows,
      archived_up_to: c.archivedUpTo,
      first_id: c.firstId,
      last_id: c.lastId,
      first_timestamp: c.firstTimestamp,
      last_timestamp: c.lastTimestamp,
      checkpoints: c.checkpoints,
      checkpoints_valid: c.checkpointsValid,
      covered_up_to: c.coveredUpTo,
      uncovered: c.uncovered && { first_id: c.uncovered.firstId, rows: c.uncovered.rows, oldest_timestamp: c.uncovered.oldestTimestamp, age_seconds: c.uncovered.ageSeconds },
      witnessed: { checked: c.witnessed.checked, newest: c.witnessed.newest, not_extended: c.witnessed.notExtended },
      head_hash: c.headHash,
    })),
    failures: report.failures,
  };
});
