/**
 * The audit trail's stores written once over the dialect port, run on both databases: the signed checkpoints
 * (Checkpointer; on SQLite also SqliteCheckpointer, the same steps driven synchronously) and the verification through
 * the port (verifyTrail), each against two connections standing for two servers on one database.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import { PostgresDatabase, SqliteDatabase, type SqlDatabase } from '@/db/dialect';
import { inTransaction } from '@/db/pg/client';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { ChainAppender, type ChainName } from './chain';
import { Checkpointer, loadOrCreateSigningKey, openCheckpoint, parseVerifierKey, SqliteCheckpointer, verifierKey } from './checkpoints';
import { PgChainWriter } from './pg-chain';
import { verifyAudit, verifyTrail } from './verify';

const pg15 = usePostgres();
const keyDir = mkdtempSync(join(tmpdir(), 'swarm-trail-contract-key-'));
const key = loadOrCreateSigningKey(keyDir);
const verifier = verifierKey(key.name, key.raw);
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  rmSync(keyDir, { recursive: true, force: true });
});

const AT = 1_790_000_000;
const valuesOf = (chain: ChainName, i: number): unknown[] =>
  chain === 'permission_denials'
    ? [null, 'deploy_serving', 'w', `{"i":${i}}`, 'agent_allowlist', `reason ${i}`, 'viewer', null, null, AT + i, 'w', '[]', `dec-${i}`, 'rev_x', null]
    : [null, 'auth.login.succeeded', 'w', 'admin', 'succeeded', null, `{"i":${i}}`, 'rev_x', '127.0.0.1', AT + i];

interface Signer {
  checkpoint(options?: { minRows?: number }): Promise<string[]>;
  latest(): Promise<{ chain: string; note: string }[]>;
}

interface TwoServers {
  a: SqlDatabase;
  b: SqlDatabase;
  signer(database: SqlDatabase): Signer;
  append(chain: ChainName, rows: number): Promise<void>;
  /** SQLite: the file's own row-by-row verifier, to compare with */
  verifyFile?(): ReturnType<typeof verifyAudit>;
}

function sqlite(signer: (d: SqliteDatabase) => Signer) {
  return async (): Promise<TwoServers> => {
    const dir = mkdtempSync(join(tmpdir(), 'swarm-trail-contract-'));
    const [d1, d2] = [openDatabase({ path: join(dir, 't.db') }), openDatabase({ path: join(dir, 't.db') })];
    cleanups.push(() => {
      d1.$client.close();
      d2.$client.close();
      rmSync(dir, { recursive: true, force: true });
    });
    let n = 0;
    return {
      a: new SqliteDatabase(d1.$client),
      b: new SqliteDatabase(d2.$client),
      signer: (d) => signer(d as SqliteDatabase),
      async append(chain, rows) {
        const appender = new ChainAppender(d1.$client, chain);
        for (let i = 0; i < rows; i++) appender.append(valuesOf(chain, n++));
      },
      verifyFile: () => verifyAudit(d1.$client, verifier),
    };
  };
}

const databases: Record<'SQLite' | 'SQLite, signed at once' | 'PostgreSQL', () => Promise<TwoServers>> = {
  SQLite: sqlite((d) => new Checkpointer(d, key)),
  'SQLite, signed at once': sqlite((d) => {
    const c = new SqliteCheckpointer(d, key);
    return { checkpoint: async (o) => c.checkpoint(o), latest: async () => c.latest() };
  }),
  async PostgreSQL() {
    const name = await pg15.freshDatabase('trail');
    const [p1, p2] = [pg15.pool(name, 4), pg15.pool(name, 4)];
    let n = 0;
    return {
      a: new PostgresDatabase(p1),
      b: new PostgresDatabase(p2),
      signer: (d) => new Checkpointer(d, key),
      append: (chain, rows) =>
        inTransaction(p1, async ({ client }) => {
          await new PgChainWriter(client).append(
            chain,
            Array.from({ length: rows }, () => valuesOf(chain, n++)),
          );
        }),
    };
  },
};

describe.each(Object.keys(databases) as (keyof typeof databases)[])('the audit trail on %s', (kind) => {
  it('signs each chain whose head moved, once, in the C2SP note format; the trail verifies with its checkpoints', async () => {
    const s = await databases[kind]();
    const signer = s.signer(s.a);
    expect(await signer.checkpoint()).toEqual([]);
    await s.append('permission_denials', 5);
    await s.append('security_events', 2);
    const notes = await signer.checkpoint();
    expect(notes).toHaveLength(2);
    const opened = notes.map((n) => openCheckpoint(n, parseVerifierKey(verifier)));
    expect(opened.map((o) => (o.ok ? [o.body.origin, o.body.size] : o.problem))).toEqual([
      ['swarm-permissions/permission_denials', 5],
      ['swarm-permissions/security_events', 2],
    ]);
    // Nothing moved: nothing signed; a head that moved by fewer rows than asked waits.
    expect(await signer.checkpoint()).toEqual([]);
    await s.append('permission_denials', 1);
    expect(await signer.checkpoint({ minRows: 2 })).toEqual([]);
    expect(await s.signer(s.b).checkpoint()).toHaveLength(1);
    expect((await signer.latest()).map((c) => [c.chain, c.note.split('\n')[1]])).toEqual([
      ['permission_denials', '6'],
      ['security_events', '2'],
    ]);
    const report = await verifyTrail(s.b, verifier);
    expect(report.failures).toEqual([]);
    expect(report.chains.map((c) => [c.chain, c.rowsChecked, c.checkpoints, c.checkpointsValid, c.coveredUpTo])).toEqual([
      ['permission_denials', 6, 2, 2, 6],
      ['security_events', 2, 1, 1, 2],
    ]);
    // On SQLite the file's own verifier (rows as arrays, one statement) reports the same.
    if (s.verifyFile) expect(report).toEqual(s.verifyFile());
  });

  it('gives a head one checkpoint when two servers sign at once, with checkpoint ids that stay gapless', async () => {
    const s = await databases[kind]();
    const [a, b] = [s.signer(s.a), s.signer(s.b)];
    for (let round = 0; round < 5; round++) {
      await s.append('permission_denials', 3);
      if (round % 2) await s.append('security_events', 1);
      const signed = await Promise.all([a.checkpoint(), b.checkpoint(), a.checkpoint(), b.checkpoint()]);
      expect(signed.flat()).toHaveLength(round % 2 ? 2 : 1);
    }
    const report = await verifyTrail(s.a, verifier);
    expect(report.failures).toEqual([]);
    expect(report.chains.map((c) => [c.chain, c.rowsChecked, c.checkpoints, c.checkpointsValid])).toEqual([
      ['permission_denials', 15, 5, 5],
      ['security_events', 2, 2, 2],
    ]);
  });

  it('refuses the checkpoints when verified with a key that did not sign them', async () => {
    const s = await databases[kind]();
    await s.append('permission_denials', 4);
    await s.signer(s.a).checkpoint();
    expect((await verifyTrail(s.a, verifier)).ok).toBe(true);
    // A key that did not sign the checkpoints: the rows verify, the checkpoint does not.
    const otherDir = mkdtempSync(join(tmpdir(), 'swarm-trail-contract-other-'));
    cleanups.push(() => rmSync(otherDir, { recursive: true, force: true }));
    const other = loadOrCreateSigningKey(otherDir);
    const report = await verifyTrail(s.a, verifierKey(other.name, other.raw));
    expect(report.ok).toBe(false);
    expect(report.failures[0]).toMatchObject({ table: 'audit_checkpoints', problem: 'checkpoint key unknown' });
  });
});
