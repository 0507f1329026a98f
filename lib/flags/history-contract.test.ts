/**
 * The flag history contract, run against both services: SQLite (two connections to one file) and PostgreSQL (two
 * services on two connection pools to the test run's throwaway cluster), each pair standing for two servers on one
 * database. The same changes, made alternately on either server, leave the same history, read alike from either.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import type { FlagChangeRow } from '@/db/schema';
import { AppError } from '@/lib/errors';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { PostgresDatabase, SqliteDatabase } from '@/db/dialect';
import { SqlFlagStore } from './store';
import type { FlagHistoryFilter } from './query';
import type { ResolvedFlag } from './resolve';
import { FlagService } from './service';
import { testSealCheck } from '@/lib/test-support/temp-app';

/** The installation's seal, as every process of it has the key. */
const SEAL = testSealCheck().seal();

/** What both services promise (a synchronous answer is awaited like a promise). */
interface Flags {
  values(): ReadonlyMap<string, boolean>;
  setOverride(name: string, value: boolean, by: string, reason: string): ResolvedFlag | Promise<ResolvedFlag>;
  unsetOverride(name: string, by: string, reason: string): ResolvedFlag | Promise<ResolvedFlag>;
  history(filter?: FlagHistoryFilter): FlagChangeRow[] | Promise<FlagChangeRow[]>;
  recordRefusal(name: string, requested: boolean | null, by: string, reason: string, refusal: string): void | Promise<void>;
  lastChanges(): Map<string, FlagChangeRow> | Promise<Map<string, FlagChangeRow>>;
  historyNames(): string[] | Promise<string[]>;
  historyAuthors(): string[] | Promise<string[]>;
  invalidate(): void | Promise<void>;
}

interface TwoServers {
  a: Flags;
  b: Flags;
  /** an override written by another process: with its seal (one that holds the key), or without (the database's holder) */
  writeBehind(name: string, value: boolean, sealed: boolean): Promise<void>;
}

const pg15 = usePostgres();
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const databases: Record<'SQLite' | 'PostgreSQL', () => Promise<TwoServers>> = {
  async SQLite() {
    const dir = mkdtempSync(join(tmpdir(), 'swarm-flags-contract-'));
    const [d1, d2] = [openDatabase({ path: join(dir, 'f.db') }), openDatabase({ path: join(dir, 'f.db') })];
    cleanups.push(() => {
      d1.$client.close();
      d2.$client.close();
      rmSync(dir, { recursive: true, force: true });
    });
    // No change feed and no resync: only invalidate() makes a service read what was written behind its back.
    const service = async (d: typeof d1) => {
      const s = new FlagService(new SqlFlagStore(new SqliteDatabase(d.$client), testSealCheck()), { env: {}, resyncMs: 0 });
      await s.invalidate();
      return s;
    };
    return {
      a: await service(d1),
      b: await service(d2),
      writeBehind: async (name, value, sealed) => {
        const at = Date.now() / 1000;
        const mac = sealed ? SEAL.override({ name, value, setBy: 'dba', setAt: at, reason: 'by hand' }) : null;
        d1.$client.prepare(`INSERT INTO flag_overrides (name, value, set_by, set_at, reason, mac) VALUES (?, ?, 'dba', ?, 'by hand', ?)`).run(name, value ? 1 : 0, at, mac);
      },
    };
  },
  async PostgreSQL() {
    const name = await pg15.freshDatabase('flags_history');
    const server = async () => {
      const pool = pg15.pool(name, 3);
      // A long resync: only invalidate() (or a notification) makes a service read the overrides again.
      const s = new FlagService(new SqlFlagStore(new PostgresDatabase(pool), testSealCheck()), { env: {}, resyncMs: 60_000 });
      await s.start();
      cleanups.push(() => s.stop());
      return { s, pool };
    };
    const [a, b] = [await server(), await server()];
    return {
      a: a.s,
      b: b.s,
      writeBehind: async (flag, value, sealed) => {
        const at = Date.now() / 1000;
        const mac = sealed ? SEAL.override({ name: flag, value, setBy: 'dba', setAt: at, reason: 'by hand' }) : null;
        await a.pool.query(`INSERT INTO flag_overrides (name, value, set_by, set_at, reason, mac) VALUES ($1, $2, 'dba', $3, 'by hand', $4)`, [flag, value, at, mac]);
      },
    };
  },
};

/** A history row without what differs by nature between two runs (its id and its time). */
const plain = (rows: readonly FlagChangeRow[]) => rows.map((r) => [r.name, r.action, r.oldValue, r.newValue, r.changedBy, r.reason]);
const reasons = (rows: readonly { reason: string }[]) => rows.map((r) => r.reason);

/** What each database's history read, to be compared at the end. */
const seen: Partial<Record<keyof typeof databases, unknown>> = {};

describe.each(Object.keys(databases) as (keyof typeof databases)[])('the flag history on %s, two servers', (kind) => {
  it('keeps every change and refusal, whichever server made it, and reads alike on both', async () => {
    const { a, b } = await databases[kind]();
    expect(await a.history()).toEqual([]);
    expect((await a.lastChanges()).size).toBe(0);
    await a.setOverride('batch_runner', false, 'ada', 'one');
    await b.setOverride('cron_scheduler', false, 'grace', 'two');
    // Back to its fallback: the override is removed, and the history says so.
    await a.setOverride('batch_runner', true, 'grace', 'three');
    await b.unsetOverride('cron_scheduler', 'ada', 'four');
    // An invariant cannot be turned off: the refusal is recorded beside the changes (as changeFlag records it).
    let refusal = '';
    try {
      await b.setOverride('audit_trail_security_events', false, 'mallory', 'quiet please');
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      refusal = (error as AppError).message;
    }
    expect(refusal).toMatch(/invariant/);
    await b.recordRefusal('audit_trail_security_events', false, 'mallory', 'quiet please', refusal);
    await a.recordRefusal('batch_runner', false, 'eve', '  ', 'locked by a profile');

    for (const s of [a, b]) {
      expect(reasons(await s.history())).toEqual(['refused: locked by a profile', `quiet please (refused: ${refusal})`, 'four', 'three', 'two', 'one']);
      expect(reasons(await s.history({ name: 'batch_runner' }))).toEqual(['refused: locked by a profile', 'three', 'one']);
      expect(reasons(await s.history({ by: 'ada' }))).toEqual(['four', 'one']);
      expect(reasons(await s.history({ name: 'cron_scheduler', by: 'grace' }))).toEqual(['two']);
      expect(await s.history({ by: 'nobody' })).toEqual([]);
      const first = await s.history({ limit: 4 });
      expect(first).toHaveLength(4);
      expect(reasons(await s.history({ before: first[first.length - 1]!.id }))).toEqual(['two', 'one']);
      expect(reasons(await s.history({ before: first[first.length - 1]!.id, limit: 1 }))).toEqual(['two']);
      // The last change that took effect, never a refusal.
      const last = await s.lastChanges();
      expect([...last.keys()].sort()).toEqual(['batch_runner', 'cron_scheduler']);
      expect(last.get('batch_runner')).toMatchObject({ action: 'unset', changedBy: 'grace', reason: 'three', oldValue: false, newValue: true });
      expect(last.get('cron_scheduler')).toMatchObject({ action: 'unset', changedBy: 'ada', oldValue: false, newValue: true });
      expect(await s.historyNames()).toEqual(['audit_trail_security_events', 'batch_runner', 'cron_scheduler']);
      expect(await s.historyAuthors()).toEqual(['ada', 'eve', 'grace', 'mallory']);
    }
    const history = await a.history();
    expect(history.find((r) => r.action === 'refused' && r.name === 'audit_trail_security_events')).toMatchObject({ oldValue: true, newValue: false, changedBy: 'mallory' });
    expect(history.every((r) => typeof r.id === 'number' && typeof r.changedAt === 'number')).toBe(true);
    seen[kind] = plain(history);
  });

  it('reads an override another process of the installation wrote (with the key) when invalidated, and never one without its seal', async () => {
    const { a, b, writeBehind } = await databases[kind]();
    expect(b.values().get('drift_monitoring')).toBe(true);
    await writeBehind('drift_monitoring', false, true);
    expect(b.values().get('drift_monitoring')).toBe(true);
    await b.invalidate();
    expect(b.values().get('drift_monitoring')).toBe(false);
    // Written by whoever holds the database but not the key: not in force.
    expect(b.values().get('cron_scheduler')).toBe(true);
    await writeBehind('cron_scheduler', false, false);
    await b.invalidate();
    expect(b.values().get('cron_scheduler')).toBe(true);
    // Nothing was changed through a service: the history has nothing to say.
    expect(await a.history()).toEqual([]);
  });
});

describe('both databases', () => {
  it('kept the same history of the same changes', () => {
    expect(seen.SQLite).toBeDefined();
    expect(seen.PostgreSQL).toEqual(seen.SQLite);
  });
});
