/**
 * The policy revisions on both databases: each database's recorder keeps a revision's content with the first row that
 * names it (SQLite synchronously, in the row's transaction; PostgreSQL in its group commit), and the one store
 * (SqlRevisionStore) reads back the same contents and counts on either. A revision this process did not compute is
 * named but not stored (the process that computed it stores it), and a revision stored by a transaction that was
 * rolled back is stored again with the next row that names it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import { PostgresDatabase, SqliteDatabase } from '@/db/dialect';
import { inTransaction } from '@/db/pg/client';
import type { AuditEvent, AuditReadEventType } from '@/lib/permissions';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { PgAuditRecorder } from './trail/pg-recorder';
import { AuditRecorder, type RecorderOptions } from './trail/recorder';
import { revisionOf, SqlRevisionStore, type RevisionContent, type RevisionStore } from './revisions';
import { SqlSecurityEventQueries, type SecurityEventQueries } from './security-events';

const content = (policy: string): RevisionContent => ({
  files: { agents: 'agents: {}\n', policy, gates: null, policy_file: 'permission_policies.yaml' },
  flags: { decision_log_all: false },
});
const A = content('rules: []\n');
const B = content('rules:\n  - { id: no-export, decision: DENY, match: { tool: export_raw_data } }\n');
/** computed by another process: its content is not known here */
const ELSEWHERE = revisionOf(content('rules: [] # another server\n'));
const known = new Map([A, B].map((c) => [revisionOf(c), c]));

const event = (type: AuditReadEventType): AuditEvent => ({ kind: 'audit', type, actor: 'system', outcome: 'succeeded' });

/** One database as these tests see it: its recorder, the one store, and a row written in a transaction rolled back. */
interface Side {
  record(e: AuditEvent): Promise<unknown>;
  /** record in a transaction that is then rolled back, and tell the recorder so (as the decision listener does) */
  recordRolledBack(e: AuditEvent): Promise<void>;
  revisions: RevisionStore;
  events: SecurityEventQueries;
}

/** The revision in force, as each side's recorder reads it. */
const inForce: Record<string, string | null> = {};
const options = (kind: string): RecorderOptions => ({
  revision: () => inForce[kind] ?? null,
  revisionContent: (r) => known.get(r),
  logAllDecisions: () => false,
});

const pg = usePostgres();
const dir = mkdtempSync(join(tmpdir(), 'swarm-revisions-'));
const closers: (() => unknown)[] = [];
const sides: Partial<Record<'SQLite' | 'PostgreSQL', Side>> = {};

beforeAll(async () => {
  const db = openDatabase({ path: join(dir, 'revisions.db') });
  closers.push(() => db.$client.close());
  const sqliteRecorder = new AuditRecorder(db.$client, options('SQLite'));
  const sqlite = new SqliteDatabase(db.$client);
  sides.SQLite = {
    record: async (e) => sqliteRecorder.record(e),
    recordRolledBack: async (e) => {
      const rollBack = new Error('rolled back');
      expect(() =>
        db.$client.transaction(() => {
          sqliteRecorder.record(e);
          throw rollBack;
        })(),
      ).toThrow(rollBack);
      sqliteRecorder.forgetStoredRevisions();
    },
    revisions: new SqlRevisionStore(sqlite),
    events: new SqlSecurityEventQueries(sqlite),
  };
  const pool = pg.pool(await pg.freshDatabase('revisions'));
  const pgRecorder = new PgAuditRecorder(pool, options('PostgreSQL'));
  const postgres = new PostgresDatabase(pool);
  sides.PostgreSQL = {
    record: (e) => pgRecorder.record(e),
    recordRolledBack: async (e) => {
      const rollBack = new Error('rolled back');
      await expect(
        inTransaction(pool, async (tx) => {
          await pgRecorder.recordIn(tx, e);
          throw rollBack;
        }),
      ).rejects.toThrow(rollBack);
    },
    revisions: new SqlRevisionStore(postgres),
    events: new SqlSecurityEventQueries(postgres),
  };
}, 60_000);

afterAll(() => {
  for (const c of closers.splice(0)) c();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(['SQLite', 'PostgreSQL'] as const)('policy revisions on %s', (kind) => {
  const side = () => sides[kind]!;

  it('keep a revision content with the first row that names it, once, and read it back', async () => {
    const s = side();
    expect(await s.revisions.count()).toBe(0);
    // A row that names no revision stores nothing.
    inForce[kind] = null;
    await s.record(event('audit.queried'));
    expect(await s.revisions.count()).toBe(0);
    inForce[kind] = revisionOf(A);
    for (let i = 0; i < 3; i++) await s.record(event('audit.queried'));
    expect(await s.revisions.count()).toBe(1);
    expect(await s.revisions.get(revisionOf(A))).toEqual(A);
    inForce[kind] = revisionOf(B);
    await s.record(event('audit.checkpointed'));
    expect(await s.revisions.count()).toBe(2);
    expect(await s.revisions.get(revisionOf(B))).toEqual(B);
    expect(await s.revisions.get(revisionOf(A))).toEqual(A);
    expect(await s.revisions.get('rev_00000000000000000000000000000000')).toBeUndefined();
    const [loaded] = await s.events.ofType('audit.checkpointed', 1);
    expect(loaded!.policyRevision).toBe(revisionOf(B));
  });

  it('name a revision computed elsewhere without storing it (its process stores it)', async () => {
    const s = side();
    const before = await s.revisions.count();
    inForce[kind] = ELSEWHERE;
    await s.record(event('audit.exported'));
    expect((await s.events.ofType('audit.exported', 1))[0]!.policyRevision).toBe(ELSEWHERE);
    expect(await s.revisions.get(ELSEWHERE)).toBeUndefined();
    expect(await s.revisions.count()).toBe(before);
  });

  it('store a revision again with the next row when the transaction that stored it was rolled back', async () => {
    const s = side();
    const fresh = content(`rules: [] # ${kind}\n`);
    known.set(revisionOf(fresh), fresh);
    inForce[kind] = revisionOf(fresh);
    await s.recordRolledBack(event('audit.verified'));
    expect(await s.revisions.get(revisionOf(fresh))).toBeUndefined();
    expect(await s.events.ofType('audit.verified')).toEqual([]);
    await s.record(event('audit.verified'));
    expect(await s.revisions.get(revisionOf(fresh))).toEqual(fresh);
  });
});
