/**
 * The sampling of allowed and asked decisions (a compliance profile's decision_log.sample), run on both databases
 * through each one's recorder: at a rate of 0.5 about half of 2,000 decisions are kept, exactly those whose decision
 * id hashes below the rate, each marked with the rate; a rate of 0 keeps none; decision_log_all keeps every one,
 * unmarked; a denial is kept whatever the rate; a decision without an id or a console poll is never sampled.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import { PostgresDatabase, SqliteDatabase, type SqlDatabase } from '@/db/dialect';
import type { CheckResult, DecisionEvent, PermissionRule } from '@/lib/permissions';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { PgAuditRecorder } from './pg-recorder';
import { AuditRecorder, type RecorderOptions } from './recorder';
import { verifyTrail } from './verify';

const pgCluster = usePostgres();
const cleanups: (() => unknown)[] = [];
afterAll(() => {
  for (const c of cleanups.splice(0)) c();
});

interface Trail {
  record(event: DecisionEvent): Promise<unknown>;
  database: SqlDatabase;
}

const databases: Record<'SQLite' | 'PostgreSQL', (options: RecorderOptions) => Promise<Trail>> = {
  async SQLite(options) {
    const dir = mkdtempSync(join(tmpdir(), 'swarm-sampling-'));
    const db = openDatabase({ path: join(dir, 'trail.db') });
    cleanups.push(() => {
      db.$client.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const recorder = new AuditRecorder(db.$client, options);
    return { record: async (e) => recorder.record(e), database: new SqliteDatabase(db.$client) };
  },
  async PostgreSQL(options) {
    const pool = pgCluster.pool(await pgCluster.freshDatabase('sampling'));
    const recorder = new PgAuditRecorder(pool, options);
    return { record: (e) => recorder.record(e), database: new PostgresDatabase(pool) };
  },
};

const N = 2_000;
/** Decision ids shaped like the real ones (UUIDv7), fixed so that a failure names the same ids on every run. */
const idOf = (i: number) => `0196a3c0-7b1d-7e2f-8a4b-${i.toString(16).padStart(12, '0')}`;
/** The test's own reading of the rule (not the module's): the first 32 bits of SHA-256 below rate * 2^32. */
const below = (id: string, rate: number) => createHash('sha256').update(id).digest().readUInt32BE(0) < rate * 2 ** 32;

const rule = (decision: PermissionRule['decision']): PermissionRule => ({ decision, priority: 100, reason: 'listed', attribution: { source: 'agent_allowlist' } });

/** A tool call decided `decision` with this id: every tenth one asks, the rest are allowed. */
function decision(i: number, over: { decision?: CheckResult['decision']; decisionId?: string | null; background?: boolean } = {}): DecisionEvent {
  const d = over.decision ?? (i % 10 === 0 ? 'ASK' : 'ALLOW');
  const id = over.decisionId === undefined ? idOf(i) : over.decisionId;
  return {
    kind: 'tool',
    context: { kind: 'tool', principal: { kind: 'agent', id: 'trainer', role: 'viewer', agent: 'trainer' }, agent: 'trainer', tool: 'train_model', arguments: { gpus: i % 16 }, flags: new Map() },
    result: { decision: d, rule: rule(d), trace: [rule(d)], ruleSource: d === 'DENY' ? 'policy:no' : 'agent_allowlist', reason: 'r', ...(id === null ? {} : { decisionId: id }) },
    ...(over.background ? { background: true } : {}),
  };
}

/** Record the 2,000 decisions (all at once: PostgreSQL's group commit takes them together), then the odd ones. */
async function recordAll(t: Trail): Promise<void> {
  await Promise.all(Array.from({ length: N }, (_, i) => t.record(decision(i))));
  await t.record(decision(N, { decisionId: null }));
  await t.record(decision(N + 1, { background: true }));
  await t.record(decision(N + 2, { decision: 'DENY' }));
}

async function kept(t: Trail): Promise<{ decisionId: string | null; type: string; detail: { sample_rate?: number; arguments: unknown } }[]> {
  const rows = await t.database.all<{ decisionId: string | null; type: string; detailJson: string }>(
    sql`SELECT decision_id AS "decisionId", type, detail_json AS "detailJson" FROM security_events WHERE type IN ('decision.allowed', 'decision.asked') ORDER BY id`,
  );
  return rows.map((r) => ({ decisionId: r.decisionId, type: r.type, detail: JSON.parse(r.detailJson) as { sample_rate?: number; arguments: unknown } }));
}

const denials = async (t: Trail) => (await t.database.all<{ decisionId: string }>(sql`SELECT decision_id AS "decisionId" FROM permission_denials`)).map((r) => r.decisionId);

const options = (logAll: boolean, rate?: number): RecorderOptions => ({
  revision: () => 'rev_sampling',
  logAllDecisions: () => logAll,
  ...(rate === undefined ? {} : { decisionSampleRate: () => rate }),
});

describe.each(Object.keys(databases) as (keyof typeof databases)[])('sampling allowed decisions on %s', (kind) => {
  it('keeps at a rate of 0.5 about half of 2,000 decisions, exactly those whose id hashes below it, marked with the rate', async () => {
    const t = await databases[kind](options(false, 0.5));
    await recordAll(t);
    const rows = await kept(t);
    const expected = Array.from({ length: N }, (_, i) => idOf(i)).filter((id) => below(id, 0.5));
    // The ids hash evenly: about half, and not a count the ids' order or shape could produce by accident.
    expect(expected.length).toBeGreaterThan(900);
    expect(expected.length).toBeLessThan(1_100);
    expect(new Set(rows.map((r) => r.decisionId))).toEqual(new Set(expected));
    expect(rows).toHaveLength(expected.length);
    expect(rows.every((r) => r.detail.sample_rate === 0.5)).toBe(true);
    // Asked decisions are sampled with the allowed ones.
    expect(rows.filter((r) => r.type === 'decision.asked').length).toBe(expected.filter((id) => parseInt(id.slice(-12), 16) % 10 === 0).length);
    expect(rows.filter((r) => r.type === 'decision.asked').length).toBeGreaterThan(0);
    // A denial is kept whatever the rate; a decision without an id and a console poll are not sampled.
    expect(await denials(t)).toEqual([idOf(N + 2)]);
    expect(rows.some((r) => r.decisionId === null || r.decisionId === idOf(N + 1))).toBe(false);
    // The rows are chained like any other: a sampled trail still verifies.
    expect((await verifyTrail(t.database, undefined)).ok).toBe(true);
  });

  it('keeps none at a rate of 0 (no profile asks), and the denial still', async () => {
    const t = await databases[kind](options(false));
    await recordAll(t);
    expect(await kept(t)).toEqual([]);
    expect(await denials(t)).toEqual([idOf(N + 2)]);
  });

  it('keeps every decision, unmarked, while decision_log_all is on, whatever the rate', async () => {
    const t = await databases[kind](options(true, 0.1));
    await recordAll(t);
    const rows = await kept(t);
    // the 2,000 and the one without an id; never the console's poll
    expect(rows).toHaveLength(N + 1);
    expect(new Set(rows.map((r) => r.decisionId))).toEqual(new Set([null, ...Array.from({ length: N }, (_, i) => idOf(i))]));
    expect(rows.some((r) => 'sample_rate' in r.detail)).toBe(false);
  });
});
