/**
 * The sign-in attempts contract, against the one store on both databases, each with two connections standing for two
 * processes (the Next.js servers of two servers on one database, or a server and the CLI): SQLite (two connections to
 * one file) and PostgreSQL (two pools on the test run's throwaway cluster). A turn, a failure or a lock taken
 * through one is in force through the other at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { PostgresDatabase, SqliteDatabase } from '@/db/dialect';
import { SqlLoginAttempts, type AttemptFailure, type LoginAttempts, type LockoutPolicy } from './attempts';

type Store = LoginAttempts;

const pg15 = usePostgres();
const cleanups: (() => unknown)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

const stores: Record<'SQLite' | 'PostgreSQL', () => Promise<{ a: Store; b: Store }>> = {
  async SQLite() {
    const dir = mkdtempSync(join(tmpdir(), 'swarm-attempts-'));
    const [d1, d2] = [openDatabase({ path: join(dir, 'a.db') }), openDatabase({ path: join(dir, 'a.db') })];
    cleanups.push(() => {
      d1.$client.close();
      d2.$client.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return { a: new SqlLoginAttempts(new SqliteDatabase(d1.$client)), b: new SqlLoginAttempts(new SqliteDatabase(d2.$client)) };
  },
  async PostgreSQL() {
    const name = await pg15.freshDatabase('attempts');
    return { a: new SqlLoginAttempts(new PostgresDatabase(pg15.pool(name, 4))), b: new SqlLoginAttempts(new PostgresDatabase(pg15.pool(name, 4))) };
  },
};

const PCI: LockoutPolicy = { afterFailures: 10, lockSeconds: 30 * 60 };

describe.each(Object.keys(stores) as (keyof typeof stores)[])('sign-in attempts on %s, two processes', (kind) => {
  let a: Store;
  let b: Store;
  beforeAll(async () => {
    ({ a, b } = await stores[kind]());
  });

  it('gives one attempt for a user name its turn at a time, whichever process asks', async () => {
    const now = 1_000;
    const starts = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).start('user:turns', [], now)));
    expect(starts.filter((s) => s.kind === 'go')).toHaveLength(1);
    expect(starts.filter((s) => s.kind === 'busy')).toHaveLength(11);
    // The failure ends the turn: the next attempt, from the other process, goes on, with the failure counted.
    await a.failed('user:turns', [], now + 1);
    expect(await b.start('user:turns', [], now + 2)).toEqual({ kind: 'go', failures: 1, delayMs: 0 });
    await b.release('user:turns');
    expect(await a.start('user:turns', [], now + 3)).toMatchObject({ kind: 'go' });
    await a.succeeded('user:turns');
    expect(await b.get('user:turns')).toBeUndefined();
  });

  it('frees a user name whose attempt never ended (its process died) when the lease runs out', async () => {
    const started = await a.start('user:crashed', [], 2_000);
    expect(started.kind).toBe('go');
    expect(await b.start('user:crashed', [], 2_010)).toEqual({ kind: 'busy' });
    expect(await b.start('user:crashed', [], 2_031)).toMatchObject({ kind: 'go' });
  });

  it('counts the failures of a user name and of an address on both, the slowest deciding the delay', async () => {
    for (let i = 0; i < 4; i++) {
      const s = await (i % 2 ? a : b).start(`user:spray${i}`, ['ip:203.0.113.7'], 3_000 + i);
      expect(s).toMatchObject({ kind: 'go', failures: i });
      await (i % 2 ? b : a).failed(`user:spray${i}`, ['ip:203.0.113.7'], 3_000 + i);
    }
    expect(await a.start('user:spray9', ['ip:203.0.113.7'], 3_010)).toEqual({ kind: 'go', failures: 4, delayMs: 500 });
  });

  it('locks a user name after the profile’s failures in a row, on every process, refuses it whatever is sent, and lets it in after the period', async () => {
    const t0 = 4_000;
    let last: AttemptFailure | undefined;
    for (let i = 0; i < 10; i++) {
      const p = i % 2 ? a : b;
      expect(await p.start('user:olivia', ['ip:198.51.100.1'], t0 + i, PCI)).toMatchObject({ kind: 'go' });
      last = await p.failed('user:olivia', ['ip:198.51.100.1'], t0 + i, PCI);
      if (i < 9) expect(last.lockedUntil).toBeNull();
    }
    expect(last).toEqual({ failures: 0, lockedUntil: t0 + 9 + 1800 });
    expect(await a.start('user:olivia', [], t0 + 10, PCI)).toEqual({ kind: 'locked', until: t0 + 1809 });
    expect(await b.start('user:olivia', ['ip:192.0.2.1'], t0 + 1808, PCI)).toEqual({ kind: 'locked', until: t0 + 1809 });
    // Another user name from the same address is not locked (an address is never locked).
    expect(await b.start('user:oscar', ['ip:198.51.100.1'], t0 + 11, PCI)).toMatchObject({ kind: 'go' });
    // After the period: in again, the count started over.
    expect(await b.start('user:olivia', [], t0 + 1809, PCI)).toEqual({ kind: 'go', failures: 0, delayMs: 0 });
  });

  it('lets an administrator lift a lock at once', async () => {
    for (let i = 0; i < 3; i++) {
      await a.start('user:alex', [], 6_000 + i, { afterFailures: 3, lockSeconds: 600 });
      await a.failed('user:alex', [], 6_000 + i, { afterFailures: 3, lockSeconds: 600 });
    }
    expect(await b.start('user:alex', [], 6_010)).toMatchObject({ kind: 'locked' });
    expect(await b.unlock('user:alex', 6_010)).toBe(true);
    expect(await a.start('user:alex', [], 6_011)).toEqual({ kind: 'go', failures: 0, delayMs: 0 });
    expect(await a.unlock('user:nobody', 6_011)).toBe(false);
  });

  it('counts every failure from an address when several user names fail from it at the same moment', async () => {
    await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).failed(`user:crowd${i}`, ['ip:192.0.2.99'], 7_000)));
    expect(await a.get('ip:192.0.2.99')).toMatchObject({ failures: 8, lastFailureAt: 7_000 });
  });
});
