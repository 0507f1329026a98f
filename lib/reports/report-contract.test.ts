/**
 * The report contract: the same audit activity, written through the real writers of each database (the recorders, the
 * approval stores and listeners as the applications wire them, the flag services) at the same fixed instants, gives
 * the same report on SQLite (a file in a temp dir) and on PostgreSQL (a fresh database of a throwaway cluster).
 *
 * The whole ReportData is compared, but for what legitimately differs:
 * - approval ids, random per request (newApprovalId): compared by the request they stand for;
 * - the chains' head hashes: the rows name those ids (an approval's events, an expiry's denial), so the hashes differ;
 * - integrity.verifiedAt and integrity.verifyMs: when and how fast this database's chains were verified.
 * SQLite has counted part of its denials into the daily table before the rest were written (the report reads the
 * counts and the rows after them); PostgreSQL keeps no daily counts and reads every row: the figures must agree.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase, type Db } from '@/db/client';
import { inTransaction, pgDatabase } from '@/db/pg/client';
import { SqlApprovalStore, type ApprovalRequest, type Decider } from '@/lib/approvals/store';
import { recordApprovalTransition } from '@/lib/audit/approval-events';
import { Checkpointer, loadOrCreateSigningKey, originOf, trustedVerifierKeys, signCheckpoint, type SigningKey } from '@/lib/audit/trail/checkpoints';
import { catchUpRollup } from '@/lib/audit/denials/rollup';
import { PgAuditRecorder } from '@/lib/audit/trail/pg-recorder';
import { AuditRecorder, type DenialInput } from '@/lib/audit/trail/recorder';
import { revisionOf, type RevisionContent } from '@/lib/audit/revisions';
import { AppError, isError } from '@/lib/errors';
import { SqlFlagStore } from '@/lib/flags/store';
import { PostgresDatabase, SqliteDatabase } from '@/db/dialect';
import { FlagService } from '@/lib/flags/service';
import type { Attribution, AuditEvent, CheckResult, Decision } from '@/lib/permissions';
import { activeProfiles } from '@/lib/profiles/load';
import { deployRequest, testBinding } from '@/lib/test-support/temp-app';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { gatherReport, type ReportData, type ReportOptions } from './data';
import { postgresTrail, reportReader, sqliteTrail, type ReportFacts, type ReportReader } from './reader';
import { testSealCheck } from '@/lib/test-support/temp-app';

const DAY = 86400;
/** Monday 2 March 2026, 00:00 UTC: the period is that week, less its first six hours (partial days at one edge). */
const T0 = Date.UTC(2026, 2, 2) / 1000;
const MAIN = { from: T0 + 6 * 3600, to: T0 + 7 * DAY };
const NOW = MAIN.to + 3 * 3600;

const profiles = activeProfiles({}, 'config', 'bfsi');
const REVISION_A: RevisionContent = { files: { agents: 'agents: {}\n', policy: 'rules: []\n', gates: null, policy_file: 'permission_policies.yaml' }, flags: { decision_log_all: true } };
const REVISION_B: RevisionContent = { ...REVISION_A, files: { ...REVISION_A.files, policy: 'rules:\n  - id: no-export\n    decision: DENY\n    tool: export_raw_data\n' } };
const contents = new Map([REVISION_A, REVISION_B].map((c) => [revisionOf(c), c]));

/** The revision in force while a trail is written (each database's recorder reads it). */
let revision: string | null = null;

/** The clock every writer reads (Date only: the drivers' timers stay real). */
let clock = 0;
function at(seconds: number): void {
  clock = seconds;
  vi.setSystemTime(seconds * 1000);
}
const tick = (seconds = 7) => at(clock + seconds);

/** One database, as the trail's writers and the report's reader see it. */
interface Side {
  record(e: AuditEvent): unknown;
  denial(d: DenialInput): unknown;
  approvals: {
    request(r: ApprovalRequest): { id: string } | Promise<{ id: string }>;
    approve(id: string, by: Decider, reason?: string): unknown;
    reject(id: string, by: Decider, reason: string): unknown;
    consume(id: string, by: Decider): unknown;
    expireDue(): unknown;
  };
  flags: {
    setOverride(name: string, value: boolean, by: string, reason: string): unknown;
    unsetOverride(name: string, by: string, reason: string): unknown;
    recordRefusal(name: string, requested: boolean | null, by: string, reason: string, refusal: string): unknown;
  };
  /** count the denials so far into the daily table, where this database keeps one */
  countDays(): Promise<unknown>;
  checkpoint(key: SigningKey): Promise<void>;
  reader(): ReportReader;
  /** the approval ids, in the order they were requested */
  approvalIds: string[];
}

/** Both recorders keep a revision's content with the first row that names it. */
const recorderOptions = { revision: () => revision, revisionContent: (r: string) => contents.get(r), logAllDecisions: () => true, maskKeys: profiles.maskKeys };

function sqliteSide(db: Db, facts: Omit<ReportFacts, 'flags'>): Side {
  const recorder = new AuditRecorder(db.$client, recorderOptions);
  const database = new SqliteDatabase(db.$client);
  const flags = new FlagService(new SqlFlagStore(database, testSealCheck()), { env: {}, locks: profiles.locks });
  // As the application wires them: each transition a security event, a rejection or expiry a denial too.
  const approvals = new SqlApprovalStore(
    new SqliteDatabase(db.$client),
    { inTransaction: (e, tx) => recordApprovalTransition(recorder, e, tx, profiles.maskKeys), afterCommit: () => undefined },
    testBinding,
  );
  return {
    record: (e) => recorder.record(e),
    denial: (d) => recorder.appendDenial(d),
    approvals,
    flags,
    countDays: () => catchUpRollup(new SqliteDatabase(db.$client)),
    checkpoint: async (key) => void (await new Checkpointer(new SqliteDatabase(db.$client), key).checkpoint()),
    reader: () => reportReader(sqliteTrail(db, database), { ...facts, flags: () => flags.resolution() }),
    approvalIds: [],
  };
}

function pgSide(pool: import('pg').Pool, flags: FlagService, facts: Omit<ReportFacts, 'flags'>): Side {
  const recorder = new PgAuditRecorder(pool, recorderOptions);
  const approvals = new SqlApprovalStore(
    new PostgresDatabase(pool),
    { inTransaction: (e, tx) => recordApprovalTransition(recorder, e, tx, profiles.maskKeys), afterCommit: () => undefined },
    testBinding,
  );
  return {
    record: (e) => recorder.record(e),
    denial: (d) => inTransaction(pool, (tx) => recorder.appendDenialIn(tx, d)),
    approvals,
    flags,
    countDays: async () => {},
    // Signed as the SQLite Checkpointer signs: the head of each chain that moved since its last checkpoint.
    checkpoint: async (key) => {
      for (const chain of ['permission_denials', 'security_events'] as const) {
        const head = (await pool.query<{ id: number; row_hash: string }>(`SELECT id, row_hash FROM ${chain} ORDER BY id DESC LIMIT 1`)).rows[0];
        const last = (await pool.query<{ size: number }>('SELECT size FROM audit_checkpoints WHERE chain = $1 ORDER BY id DESC LIMIT 1', [chain])).rows[0]?.size ?? 0;
        if (!head || head.id <= last) continue;
        const time = Date.now() / 1000;
        const note = signCheckpoint(key, { origin: originOf(chain, key.name), size: head.id, headHash: head.row_hash, time });
        await pool.query('INSERT INTO audit_checkpoints (chain, size, head_hash, created_at, note) VALUES ($1, $2, $3, $4, $5)', [chain, head.id, head.row_hash, time, note]);
      }
    },
    reader: () => reportReader(postgresTrail(new PostgresDatabase(pool)), { ...facts, flags: () => flags.resolution() }),
    approvalIds: [],
  };
}

const SHAPES: [agent: string, tool: string, decision: Decision, rule: Attribution, reason: string][] = [
  ['data_cleaner', 'deploy_serving', 'DENY', { source: 'agent_allowlist' }, 'Tool "deploy_serving" is not in the allowlist of agent "data_cleaner".'],
  ['trainer', 'tune_hyperparameters', 'DENY', { source: 'policy', id: 'bfsi/tuning-capacity-review' }, 'Hyperparameter searches of 500 or more trials need a capacity review first.'],
  ['evaluator', 'fairness_audit', 'DENY', { source: 'flag', id: 'auto_fairness_audit' }, 'Feature flag "auto_fairness_audit" is off.'],
  ['shadow_agent', 'export_raw_data', 'DENY', { source: 'agent_allowlist' }, 'Unknown agent "shadow_agent".'],
  ['compliance_agent', 'export_raw_data', 'DENY', { source: 'policy', id: 'bfsi/no-pii-export' }, 'Exports that contain personal data are never allowed (GDPR art. 5).'],
  ['data_cleaner', 'profile_dataset', 'ALLOW', { source: 'agent_allowlist' }, 'Tool "profile_dataset" is in the allowlist of agent "data_cleaner".'],
  ['deployer', 'deploy_serving', 'ASK', { source: 'hitl', id: 'deploy' }, 'Deploys need an approval.'],
];

/** A decision as the engine hands it to the recorder. */
function decision(i: number, shape = SHAPES[i % SHAPES.length]!): AuditEvent {
  const [agent, tool, verdict, attribution, reason] = shape;
  const rule = { decision: verdict, priority: 500, attribution, reason };
  const result: CheckResult = { decision: verdict, rule, trace: [rule], ruleSource: attribution.id ? `${attribution.source}:${attribution.id}` : attribution.source, reason, decisionId: `dec_${i}` };
  const args = i % 3 === 0 ? { n: i, card_number: '4111 1111 1111 1111' } : { n: i };
  return { kind: 'tool', context: { kind: 'tool', principal: { kind: 'agent', id: agent, role: 'viewer', agent }, agent, tool, arguments: args, flags: new Map() }, result };
}

/** The engine's denial of a call already rejected (the gate's DENY, with its trace), as it reaches the recorder. */
function retryOfRejected(k: number, approvalId: string): AuditEvent {
  const rule = { decision: 'DENY' as Decision, priority: 400, attribution: { source: 'hitl' as const, id: 'deploy' }, reason: `Rejected by an operator (approval ${approvalId}): Outside the deploy window.` };
  const result: CheckResult = { decision: 'DENY', rule, trace: [rule], ruleSource: 'hitl:deploy', reason: rule.reason, decisionId: `dec_retry_${k}` };
  const principal = { kind: 'agent' as const, id: 'deployer', role: 'viewer' as const, agent: 'deployer' };
  return { kind: 'tool', context: { kind: 'tool', principal, agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-3', env: 'prod' }, flags: new Map() }, result };
}

const security = (type: string, actor: string, outcome: string, target: string | null, detail?: Record<string, unknown>, role: 'auditor' | 'operator' | 'admin' | null = null): AuditEvent =>
  ({ kind: type.startsWith('auth.') ? 'auth' : type.startsWith('audit.') ? 'audit' : 'config', type, actor, actorRole: role, outcome, target, detail }) as AuditEvent;

/** The same week of activity, at the same instants, on one database. */
async function writeTrail(s: Side, key: SigningKey): Promise<void> {
  const olivia: Decider = { id: 'olivia', role: 'operator' };
  const oscar: Decider = { id: 'oscar', role: 'operator' };
  const request = async (r: Partial<ApprovalRequest>) => {
    const row = await s.approvals.request(deployRequest(r));
    s.approvalIds.push(row.id);
    return row.id;
  };
  const refused = async (what: () => unknown) => {
    try {
      await what();
    } catch (error) {
      if (!isError(error, AppError)) throw error;
      return error;
    }
    throw new Error('expected a refusal');
  };
  const changeFlag = async (name: string, value: boolean | null, by: string, reason: string) => {
    try {
      await (value === null ? s.flags.unsetOverride(name, by, reason) : s.flags.setOverride(name, value, by, reason));
    } catch (error) {
      if (!isError(error, AppError) || error.code !== 'INVARIANT') throw error;
      await s.record(security('flag.refused', by, 'refused', name, { requested: value, reason, refusal: error.message }, 'admin'));
      await s.flags.recordRefusal(name, value, by, reason, error.message);
      return;
    }
    await s.record(security('flag.changed', by, 'succeeded', name, { action: value === null ? 'unset' : 'set', new_value: value, reason }, 'admin'));
  };

  // Before the period: the first revision, a denial, a flag turned off.
  revision = null;
  at(T0 - 3 * DAY + 100);
  revision = revisionOf(REVISION_A);
  await s.record(security('config.loaded', 'system', 'succeeded', '/srv/swarm/config/permission_policies.yaml', { revision }));
  tick();
  await s.record(decision(1));
  tick();
  await changeFlag('email_notifications', false, 'root', 'Quiet before the audit.');

  // The period: a new revision in its first hours, then decisions every 4.5 hours.
  at(T0 + 7 * 3600);
  revision = revisionOf(REVISION_B);
  await s.record(security('config.loaded', 'system', 'succeeded', '/srv/swarm/config/permission_policies.yaml', { revision }));
  for (let i = 0; i < 36; i++) {
    at(T0 + 2 * 3600 + i * 4.5 * 3600 + 11);
    await s.record(decision(i));
    if (i === 20) await s.countDays();
  }
  await s.checkpoint(key);

  // Human oversight on day 4: two people, one person and a run, a rejection, an expiry, one still pending.
  at(T0 + 3 * DAY + 3600);
  const two = await request({ arguments: { model_id: 'm-1', env: 'prod' }, approvalsRequired: 2, risk: 'high', decisionId: 'dec_two' });
  tick(300);
  await s.approvals.approve(two, olivia, 'model card attached');
  tick(60);
  await refused(() => s.approvals.approve(two, olivia, 'again'));
  tick(600);
  await s.approvals.approve(two, oscar, 'second reviewer from risk');
  tick();
  const one = await request({ arguments: { model_id: 'm-2', env: 'staging' } });
  tick(120);
  await s.approvals.approve(one, olivia, 'staging first');
  tick(30);
  await s.approvals.consume(one, { id: 'agent:deployer', role: 'viewer' });
  tick();
  const rejected = await request({ arguments: { model_id: 'm-3', env: 'prod' }, approvalsRequired: 2, risk: 'high' });
  tick(900);
  await s.approvals.reject(rejected, oscar, 'Outside the deploy window.');
  // The agent makes the rejected call twice more: denied by the gate each time, repeats counted apart.
  for (let k = 0; k < 2; k++) {
    tick(60);
    await s.record(retryOfRejected(k, rejected));
  }
  tick();
  await request({ arguments: { model_id: 'm-4', env: 'prod' }, expiresInSeconds: 60 });
  tick(120);
  await s.approvals.expireDue();
  tick();
  await request({ arguments: { model_id: 'm-5', env: 'prod' }, expiresInSeconds: 30 * DAY });

  // Flags on day 5: an override removed, a locked flag and an invariant refused.
  at(T0 + 4 * DAY + 7200);
  await changeFlag('email_notifications', null, 'root', 'Back to the default.');
  tick();
  await changeFlag('decision_log_all', false, 'root', 'too noisy');
  tick();
  await changeFlag('audit_trail_security_events', false, 'root', 'disk is full');

  // People on day 6: sign-ins, failed ones, reads and exports of the trail, configuration refused and switched.
  at(T0 + 5 * DAY + 9 * 3600);
  for (const [type, actor, outcome, target, detail, role] of [
    ['auth.login.succeeded', 'alex', 'succeeded', 'alex', undefined, 'auditor'],
    ['auth.login.succeeded', 'olivia', 'succeeded', 'olivia', undefined, 'operator'],
    ['auth.login.succeeded', 'alex', 'succeeded', 'alex', undefined, 'auditor'],
    ['auth.login.failed', 'mallory', 'failed', 'mallory', { reason: 'wrong user name or password' }, null],
    ['auth.login.failed', 'mallory', 'failed', 'mallory', { reason: 'wrong user name or password' }, null],
    ['auth.login.failed', 'Root', 'failed', 'Root', { reason: 'wrong user name or password' }, null],
    ['auth.login.failed', 'anonymous', 'failed', null, { reason: 'no user name' }, null],
    ['audit.queried', 'alex', 'succeeded', 'permission_denials', { filter: { since: 86400 } }, 'auditor'],
    ['audit.exported', 'alex', 'succeeded', 'permission_denials', { format: 'csv', filter: { agent: 'trainer' } }, 'auditor'],
    ['audit.exported', 'alex', 'succeeded', 'permission_denials', { format: 'jsonl' }, 'auditor'],
    ['config.refused', 'system', 'refused', '/srv/swarm/config/gates.yaml', { error: 'gates.yaml:3:1: unknown key in /srv/swarm/config/gates.yaml' }, null],
    ['profile.switched', 'system', 'succeeded', null, { from: [], to: ['bfsi'] }, null],
    ['audit.report_generated', 'alex', 'succeeded', 'rpt_1', { format: 'pdf' }, 'auditor'],
  ] as const) {
    tick(13);
    await s.record(security(type, actor, outcome, target, detail, role));
  }

  // Around the end: denials at exactly `to` (left out) and after it, then the closing checkpoint.
  at(MAIN.to + 1800);
  for (const timestamp of [MAIN.to, MAIN.to, MAIN.to + 3600]) {
    await s.denial({ toolName: 'deploy_serving', agentName: 'trainer', ruleSource: 'agent_allowlist', reason: 'not listed', userRole: 'viewer', principal: 'trainer', timestamp });
  }
  tick();
  await s.checkpoint(key);
}

const pg = usePostgres();
const dir = mkdtempSync(join(tmpdir(), 'swarm-report-contract-'));
const key = loadOrCreateSigningKey(dir);
const facts = { profiles, revision: () => revisionOf(REVISION_B), verifierKey: () => trustedVerifierKeys(dir, {}) };
const sides: { SQLite?: Side; PostgreSQL?: Side } = {};
let sqliteDb: Db;
let pgFlags: FlagService;

beforeAll(async () => {
  sqliteDb = openDatabase({ path: join(dir, 'report.db') });
  const name = await pg.freshDatabase('report');
  const pool = pg.pool(name, 4);
  pgFlags = new FlagService(new SqlFlagStore(new PostgresDatabase(pool), testSealCheck()), { env: {}, locks: profiles.locks, resyncMs: 60_000 });
  await pgFlags.start();
  sides.SQLite = sqliteSide(sqliteDb, facts);
  sides.PostgreSQL = pgSide(pool, pgFlags, facts);
  vi.useFakeTimers({ toFake: ['Date'] });
  try {
    await writeTrail(sides.SQLite, key);
    await writeTrail(sides.PostgreSQL, key);
  } finally {
    vi.useRealTimers();
  }
  await pgFlags.invalidate();
}, 60_000);

afterAll(async () => {
  await pgFlags?.stop();
  sqliteDb?.$client.close();
  rmSync(dir, { recursive: true, force: true });
});

const options = (over: Partial<ReportOptions> = {}): ReportOptions => ({ period: MAIN, id: 'rpt_contract', now: NOW, generatedBy: { actor: 'alex', role: 'auditor' }, ...over });

/** What may differ between the databases set aside (see the top of this file); approval ids by the request they name. */
function comparable(data: ReportData, side: Side): unknown {
  let json = JSON.stringify(data);
  side.approvalIds.forEach((id, i) => (json = json.split(id).join(`<approval ${i + 1}>`)));
  const copy = JSON.parse(json) as ReportData;
  const integrity = copy.integrity as Partial<ReportData['integrity']>;
  delete integrity.verifiedAt;
  delete integrity.verifyMs;
  for (const c of copy.integrity.chains) c.headHash = c.headHash === null ? null : '<head>';
  return copy;
}

async function both(over: Partial<ReportOptions> = {}): Promise<{ sqlite: ReportData; pg: ReportData }> {
  return { sqlite: await gatherReport(sides.SQLite!.reader(), options(over)), pg: await gatherReport(sides.PostgreSQL!.reader(), options(over)) };
}

describe('the audit report on SQLite and on PostgreSQL', () => {
  it('is the same report for the same trail: every figure, list, chart bar and control', async () => {
    const { sqlite, pg: onPg } = await both();
    expect(comparable(onPg, sides.PostgreSQL!)).toEqual(comparable(sqlite, sides.SQLite!));
  });

  it('holds what was written: the test is not comparing two empty reports', async () => {
    const { sqlite, pg: onPg } = await both();
    for (const [data, reader] of [
      [sqlite, sides.SQLite!.reader()],
      [onPg, sides.PostgreSQL!.reader()],
    ] as const) {
      const stored = await reader.get<{ n: number }>('SELECT count(*) AS n FROM permission_denials WHERE timestamp >= ? AND timestamp < ?', [MAIN.from, MAIN.to]);
      expect(data.denials.total).toBe(stored!.n);
      expect(data.denials.chart.buckets.reduce((n, b) => n + b.total, 0)).toBe(data.denials.total);
      expect(data.integrity.ok).toBe(true);
      expect(data.integrity.chains.map((c) => [c.chain, c.checkpoints, c.checkpointsValid])).toEqual([
        ['permission_denials', 2, 2],
        ['security_events', 2, 2],
      ]);
      expect(data.integrity.checkpointsInPeriod).toBe(2);
    }
    expect(sqlite.decisions.allowed).toBeGreaterThan(0);
    expect(sqlite.decisions.asked).toBeGreaterThan(0);
    expect(sqlite.denials.masked).toBeGreaterThan(0);
    expect(sqlite.denials.chart.bucketSeconds).toBe(DAY);
    const o = sqlite.oversight;
    expect({ requested: o.requested, approved: o.approved, rejected: o.rejected, expired: o.expired, pending: o.pending, ran: o.ran, twoPerson: o.twoPerson.total, refused: o.refusedAttempts }).toEqual({
      requested: 5,
      approved: 2,
      rejected: 1,
      expired: 1,
      pending: 1,
      ran: 1,
      twoPerson: 2,
      refused: 1,
    });
    expect(o.twoPerson.rows[0]!.approvers).toBe('olivia (operator), oscar (operator)');
    // The rejection and the expiry are recorded denials; the two calls made again after the rejection are repeats.
    expect(sqlite.denials.hitl).toMatchObject({ decisions: 2, repeats: 2 });
    expect(sqlite.denials.hitl.repeatedCalls).toEqual([expect.objectContaining({ agent: 'deployer', tool: 'deploy_serving', status: 'rejected', repeats: 2 })]);
    // The trail was read by a person on one day of the week: the daily review is counted by day.
    expect(sqlite.coverage.reviewedDays).toHaveLength(1);
    expect(sqlite.coverage.daysWithRows.length).toBeGreaterThan(1);
    expect(sqlite.changes.flagChanges).toMatchObject({ total: 3, refused: 2 });
    expect(sqlite.changes.flagChanges.rows.map((r) => [r.name, r.action, r.oldValue, r.newValue])).toEqual([
      ['email_notifications', 'unset', false, true],
      ['decision_log_all', 'refused', true, false],
      ['audit_trail_security_events', 'refused', true, false],
    ]);
    expect(sqlite.changes.revisions.rows.map((r) => r.revision)).toEqual([revisionOf(REVISION_B)]);
    expect(sqlite.changes.revisionAtStart).toBe(revisionOf(REVISION_A));
    expect(sqlite.security).toMatchObject({ signIns: 3, signInUsers: 2, failedSignIns: 4, reads: 1, reportsGenerated: 1 });
    expect(sqlite.security.failedSignInTargets).toEqual([
      { value: 'mallory', count: 2 },
      { value: 'anonymous', count: 1 },
      { value: 'Root', count: 1 },
    ]);
    // SQLite read part of the period from its daily counts; PostgreSQL has none and read every row.
    expect((await sides.SQLite!.reader().get<{ h: number }>('SELECT high_water AS h FROM permission_denial_rollup_state WHERE id = 1'))!.h).toBeGreaterThan(0);
    expect(await sides.PostgreSQL!.reader().get('SELECT high_water FROM permission_denial_rollup_state')).toBeUndefined();
  });

  it('agrees on other periods, a profile restriction and short lists: sub-day bars, weekly bars, partial days at both ends', async () => {
    for (const [over, bars] of [
      [{ period: { from: T0 + DAY + 5 * 3600 + 17, to: T0 + 2 * DAY + 17 * 3600 } }, 3600],
      [{ period: { from: T0 + 2 * DAY + 1234, to: T0 + 5 * DAY + 4321 } }, DAY],
      [{ period: { from: T0 - 150 * DAY + 99, to: T0 + 50 * DAY }, profile: 'bfsi' }, 7 * DAY],
      [{ listCap: 2, appendixCap: 5 }, DAY],
    ] satisfies [Partial<ReportOptions>, number][]) {
      const { sqlite, pg: onPg } = await both(over);
      expect(sqlite.denials.total, JSON.stringify(over)).toBeGreaterThan(0);
      expect(sqlite.denials.chart.bucketSeconds).toBe(bars);
      expect(comparable(onPg, sides.PostgreSQL!), JSON.stringify(over)).toEqual(comparable(sqlite, sides.SQLite!));
    }
  });
});
