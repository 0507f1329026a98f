/**
 * The audit trail's reads, run against both databases: the same denials and security events, written by each
 * database's recorder with the same fixed timestamps (so both chains are real and equal), are read through the one
 * DenialStore (SqlDenialStore) and SqlSecurityEventQueries on a SQLite file and on a throwaway PostgreSQL cluster (in a
 * database with an English collation), and every read must answer the same: rows, pages and cursors, counts, summaries, facets,
 * histograms, the live tail and exports.
 *
 * On SQLite part of the trail is behind its free-text index and its daily counts and the rest is not, so both of
 * SQLite's paths (index and scan, counts and rows) are compared with PostgreSQL's one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '@/db/client';
import type pg from 'pg';
import { inTransaction, migratePostgres } from '@/db/pg/client';
import type { DenialRow, SecurityEventRow } from '@/db/schema';
import { AppError, isError } from '@/lib/errors';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { PostgresDatabase, SqliteDatabase } from '@/db/dialect';
import { catchUpRollup } from './denials/rollup';
import { catchUpSearchIndex } from './denials/search';
import { DENIAL_SORT_KEYS, SORT_ORDERS, type DenialFilter, type DenialMatch } from './denials/filter';
import { SqlDenialStore, type DenialStore } from './denials/store';
import { PgChainWriter } from './trail/pg-chain';
import { PgAuditRecorder } from './trail/pg-recorder';
import { AuditRecorder, eventValues, type DenialInput, type EventRow, type RecorderOptions } from './trail/recorder';
import { SqlSecurityEventQueries, type EventFilter } from './security-events';

type Maybe<T> = T | Promise<T>;

/** What both security event queries promise. */
interface EventReads {
  list(f?: EventFilter): Maybe<{ rows: SecurityEventRow[]; nextCursor: number | null }>;
  ofType(type: string, limit?: number): Maybe<SecurityEventRow[]>;
}

interface Reads {
  denials: DenialStore;
  events: EventReads;
}

const DAY = 86400;
/** The seeded trail ends a minute before the tests start; its days are counted back from the last UTC midnight. */
const NOW = Math.floor(Date.now() / 1000) - 60;
const MIDNIGHT = Math.floor(NOW / DAY) * DAY;
/** `since` windows the filters use: no row is seeded within ten minutes of their edges. */
const SINCE = [3600, DAY, 7 * DAY];

/** A small deterministic generator, so that a failure names the same trail on every run. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return s / 2_147_483_648;
  };
}

const AGENTS = ['data_cleaner', 'Data_Cleaner', 'trainer', 'trainer_v2', 'batch_runner', 'Zed', 'élan', null] as const;
const TOOLS = ['deploy_serving', 'tune_hyperparameters', 'read_file', 'Read_File', 'http'] as const;
const RULES = ['policy:no-prod', 'policy:no-pii-export', 'policy', 'policyx:c', 'flag:kill_switch', 'agent_allowlist', 'rbac:admin', 'hitl:denied', 'hitl:expired'] as const;
const ROLES = ['viewer', 'operator', null] as const;
const REASONS = ['Deploy to PROD refused', '100% of budget', 'needs review', 'a_b', 'Role "viewer" is below the role "admin" this endpoint requires.', null] as const;
const PATHS = ['/api/v1/flags/batch_runner', '/api/v1/approvals/ab12/approve', '/api/v1/permissions/denials'] as const;
const ARGUMENTS = [
  { model_id: 'm-7', trials: 500 },
  { env: 'prod', nested: { path: '/srv/data/train.csv', tags: ['a', 'b'], deep: [{ k: true }, null] } },
  { sql: 'SELECT 1\nFROM t', quote: 'say "hi"', back: 'C:\\tmp' },
  { ratio: 0.5, neg: -2.5, count: 0, big: 9_007_199_254_740_991 },
  { city: 'café', percent: '50%_off' },
  {},
  [1, 'two', { three: 3 }],
  null,
] as const;

function pick<T>(next: () => number, values: readonly T[]): T {
  return values[Math.floor(next() * values.length)]!;
}

/** The trail: 240 denials over twenty days, some on day boundaries, some sharing a timestamp. */
function denialRows(): DenialInput[] {
  const next = random(14);
  const rows: DenialInput[] = [];
  for (let i = 0; i < 240; i++) {
    let timestamp: number;
    if (i % 17 === 0) timestamp = MIDNIGHT - Math.floor(next() * 15) * DAY;
    else if (i % 13 === 0 && rows.length > 0) timestamp = rows[rows.length - 1]!.timestamp!;
    else timestamp = NOW - Math.floor(next() * 20 * DAY);
    if (SINCE.some((s) => Math.abs(NOW - s - timestamp) < 600)) timestamp -= 1200;
    const tool = pick(next, TOOLS);
    const args = pick(next, ARGUMENTS);
    rows.push({
      toolCallId: `call-${i}`,
      toolName: tool,
      agentName: pick(next, AGENTS),
      argumentsJson: args === null ? null : JSON.stringify(args),
      ruleSource: pick(next, RULES),
      reason: pick(next, REASONS),
      userRole: pick(next, ROLES),
      httpMethod: tool === 'http' ? 'PUT' : null,
      httpPath: tool === 'http' ? pick(next, PATHS) : null,
      principal: 'tester',
      traceJson: '[]',
      decisionId: `dec-${i}`,
      timestamp,
    });
  }
  return rows;
}

const EVENT_TYPES = ['auth.login.failed', 'auth.login.succeeded', 'authz.checked', 'auth', 'token.created', 'approval.approved', 'flag.set', 'audit.queried'] as const;

function eventRows(): EventRow[] {
  const next = random(7);
  return Array.from({ length: 60 }, (_, i) => ({
    decisionId: i % 3 === 0 ? `dec-e${i % 9}` : null,
    type: pick(next, EVENT_TYPES),
    actor: pick(next, ['olivia', 'otto', 'agent:trainer']),
    actorRole: pick(next, ['admin', 'operator', null]),
    outcome: pick(next, ['succeeded', 'failed', 'refused']),
    target: pick(next, ['permission_denials', 'flag:kill_switch', null]),
    detail: i % 2 ? { n: i, note: 'x' } : null,
    ip: i % 4 ? '127.0.0.1' : null,
    timestamp: NOW - Math.floor(next() * 10 * DAY),
  }));
}

const options: RecorderOptions = { revision: () => 'rev-contract', logAllDecisions: () => false };
const pgCluster = usePostgres();
const cleanups: (() => unknown)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

const denials = denialRows();
const events = eventRows();
/** SQLite indexes and counts this many denials ahead; the rest are read by its scans. */
const COUNTED = 160;

async function seedSqlite(): Promise<Reads & { db: Db }> {
  const dir = mkdtempSync(join(tmpdir(), 'swarm-reads-'));
  const db = openDatabase({ path: join(dir, 'trail.db') });
  cleanups.push(() => {
    db.$client.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const recorder = new AuditRecorder(db.$client, options);
  const database = new SqliteDatabase(db.$client);
  for (const [i, d] of denials.entries()) {
    recorder.appendDenial(d);
    if (i + 1 === COUNTED) {
      await catchUpSearchIndex(database, 10_000);
      await catchUpRollup(database);
    }
  }
  for (const e of events) recorder.appendEvent(e);
  return { db, denials: new SqlDenialStore(database), events: new SqlSecurityEventQueries(database) };
}

/**
 * A migrated database that sorts text like most servers do (ICU, en-US: `alice` before `Zed`, punctuation ignored at
 * first), not like the test cluster's C locale: byte-order answers must not depend on the C locale.
 */
async function englishDatabase(prefix: string): Promise<pg.Pool> {
  const name = pgCluster.databaseName(prefix);
  const admin = pgCluster.pool(undefined, 1);
  await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
  const pool = pgCluster.pool(name);
  await migratePostgres(pool, name);
  return pool;
}

async function seedPostgres(): Promise<Reads> {
  const pool = await englishDatabase('reads_en');
  const [{ ordered }] = (await pool.query<{ ordered: string[] }>(`SELECT array_agg(v ORDER BY v) AS ordered FROM unnest(ARRAY['Zed', 'alice', 'policy:a', 'policyx']) AS v`)).rows as [{ ordered: string[] }];
  expect(ordered).toEqual(['alice', 'policy:a', 'policyx', 'Zed']);
  const recorder = new PgAuditRecorder(pool, options);
  for (const d of denials) await inTransaction(pool, (tx) => recorder.appendDenialIn(tx, d));
  // PgAuditRecorder.record stamps an event with the clock; the chain writer it appends with takes the fixed timestamp.
  for (const e of events) await inTransaction(pool, (tx) => new PgChainWriter(tx.client).append('security_events', [eventValues(e, options.revision())]));
  return { denials: new SqlDenialStore(new PostgresDatabase(pool)), events: new SqlSecurityEventQueries(new PostgresDatabase(pool)) };
}

let sqlite: Reads & { db: Db };
let postgres: Reads;
beforeAll(async () => {
  sqlite = await seedSqlite();
  postgres = await seedPostgres();
}, 120_000);

/** Ask both; expect the same answer; return it. */
async function same<T>(read: (s: Reads) => Maybe<T>): Promise<T> {
  const a = await read(sqlite);
  const b = await read(postgres);
  expect(b).toEqual(a);
  return a;
}

async function collect(rows: AsyncIterable<DenialRow>): Promise<DenialRow[]> {
  const out: DenialRow[] = [];
  for await (const r of rows) out.push(r);
  return out;
}

/** Every page of a filter, each page's rows and cursor. */
async function pages(s: Reads, f: DenialFilter): Promise<{ ids: number[]; nextCursor: string | null }[]> {
  const out: { ids: number[]; nextCursor: string | null }[] = [];
  let cursor: string | undefined;
  do {
    const page = await s.denials.query({ ...f, cursor });
    out.push({ ids: page.rows.map((r) => r.id), nextCursor: page.nextCursor });
    cursor = page.nextCursor ?? undefined;
  } while (cursor && out.length < 100);
  return out;
}

/** The error a read gives (synchronous or rejected), or undefined. */
async function failure(read: () => unknown): Promise<unknown> {
  try {
    await read();
  } catch (error) {
    return error;
  }
  return undefined;
}

const WINDOWS: DenialMatch[] = [
  {},
  { since: 3600 },
  { since: DAY },
  { since: 7 * DAY },
  { from: MIDNIGHT - 3 * DAY, to: MIDNIGHT - DAY },
  { from: MIDNIGHT - 5 * DAY + 5000, to: NOW - 7200 },
  { from: MIDNIGHT - 2 * DAY, to: MIDNIGHT - 2 * DAY },
];

const ATTRIBUTES: DenialMatch[] = [
  { agent: 'data_cleaner' },
  { agent: 'DATA_CLEANER' },
  { agent: 'train' },
  { agent: 'trainer*' },
  { agent: 'nobody' },
  { tool: 'READ_FILE' },
  { tool: 'deploy' },
  { ruleSource: 'policy' },
  { ruleSource: 'POLICY' },
  { ruleSource: 'pol' },
  { ruleSource: 'policy:no-' },
  { ruleSource: 'hitl:d' },
  { ruleSource: 'rbac:admin' },
  { role: 'viewer' },
  { agent: 'train', tool: 'tune', ruleSource: 'policy' },
];

const TEXTS = [
  'prod',
  'PROD',
  'm-7',
  '"trials": 500',
  '"trials": 500,',
  '"model_id": "m-7",\n  "trials": 500',
  'train.csv',
  '/srv/data',
  'flags/batch',
  'batch_runner',
  '0% of',
  'a_b',
  '50%_',
  '%',
  '_',
  'x',
  ':5',
  '1\\nFROM',
  'say \\"hi',
  'C:\\\\tmp',
  '"k": true',
  '"three": 3',
  '"two"',
  'café',
  '9007199254740991',
  '"neg": -2.5',
  '   ',
  'nothing like this',
];

const MIXED: DenialMatch[] = [
  { agent: 'train', q: 'prod', since: 7 * DAY },
  { ruleSource: 'policy', q: 'm-7', from: MIDNIGHT - 10 * DAY, to: NOW - DAY },
  { tool: 'http', q: 'approve', role: 'operator' },
  { agent: 'Data_Cleaner', ruleSource: 'hitl', q: '"env": "prod"' },
];

const FILTERS: DenialMatch[] = [...WINDOWS, ...ATTRIBUTES, ...TEXTS.map((q) => ({ q })), ...MIXED];
const label = (f: DenialMatch) => JSON.stringify(f);

describe('the denial reads on SQLite and PostgreSQL', () => {
  it('hold the same trail: every row equal, chain hashes included', async () => {
    const rows = await same(async (s) => collect(s.denials.iterate({})));
    expect(rows).toHaveLength(denials.length);
    expect(rows[0]!.rowHash).toMatch(/^[0-9a-f]{64}$/);
    // Both of SQLite's paths are exercised: part of the trail is indexed and counted ahead, part is not.
    expect(sqlite.db.$client.prepare('SELECT indexed_up_to AS n FROM permission_denials_search_progress').get()).toEqual({ n: COUNTED });
    expect(sqlite.db.$client.prepare('SELECT high_water AS n FROM permission_denial_rollup_state').get()).toEqual({ n: COUNTED });
  });

  it('count, list the first page and its cursor alike for windows, attributes, free text and their mixtures', async () => {
    let matched = 0;
    for (const f of FILTERS) {
      const n = await same((s) => s.denials.count(f));
      const page = await same((s) => s.denials.query({ ...f, limit: 10 }));
      expect(page.rows.length, label(f)).toBe(Math.min(n, 10));
      if (n > 0) matched++;
    }
    // The filters are not all empty answers that agree trivially.
    expect(matched).toBeGreaterThan(FILTERS.length * 0.7);
  });

  it('find text the way SQLite does: copied from the panel, inside a path, a literal % or _, short text over the stored JSON', async () => {
    const count = (q: string) => same((s) => s.denials.count({ q }));
    expect(await count('"trials": 500')).toBeGreaterThan(0);
    expect(await count('"model_id": "m-7",\n  "trials": 500')).toBeGreaterThan(0);
    expect(await count('train.csv')).toBeGreaterThan(0);
    expect(await count('flags/batch')).toBeGreaterThan(0);
    expect(await count('50%_')).toBeGreaterThan(0);
    // Two characters are looked for in the stored JSON (no space after the colon), three in the panel's form.
    expect(await count(':5')).toBeGreaterThan(0);
    expect(await count('": 5')).toBeGreaterThan(0);
    expect(await count('":5')).toBe(0);
    expect(await count('PROD')).toBe(await count('prod'));
  });

  it('page through every sort in both orders with the same rows and the same cursors', async () => {
    for (const sort of DENIAL_SORT_KEYS) {
      for (const order of SORT_ORDERS) {
        for (const f of [{}, { agent: 'train' }, { q: 'prod' }, { since: 7 * DAY, ruleSource: 'policy' }] as DenialMatch[]) {
          const all = await same((s) => pages(s, { ...f, sort, order, limit: 7 }));
          const ids = all.flatMap((p) => p.ids);
          expect(new Set(ids).size, `${sort} ${order} ${label(f)}`).toBe(ids.length);
          expect(ids.length).toBe(await sqlite.denials.count(f));
        }
      }
    }
  });

  it('continue from a numeric cursor, and refuse a cursor of another sort alike', async () => {
    await same((s) => s.denials.query({ cursor: '200', limit: 5 }));
    await same((s) => s.denials.query({ cursor: '20', order: 'asc', limit: 5 }));
    const first = await same((s) => s.denials.query({ sort: 'tool_name', order: 'asc', limit: 3 }));
    for (const [sort, cursor] of [
      ['agent_name', first.nextCursor!],
      ['timestamp', 'not a cursor'],
      ['id', 'abc'],
    ] as const) {
      const errors = await same(async (s) => {
        const e = await failure(() => s.denials.query({ sort, cursor }));
        return isError(e, AppError) ? { code: e.code, message: e.message } : e;
      });
      expect(errors).toMatchObject({ code: 'BAD_REQUEST' });
    }
  });

  it('summarise, facet and chart alike, over the daily counts on SQLite and the rows on PostgreSQL', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const f of FILTERS) {
      await same((s) => s.denials.summary(f, { now }));
      await same((s) => s.denials.summary(f, { now, top: 2 }));
      await same((s) => s.denials.histogram(f, { now }));
      for (const field of ['agent', 'tool', 'rule_source'] as const) await same((s) => s.denials.facet(field, f, { limit: 4 }));
    }
    await same((s) => s.denials.facet('agent', {}, { prefix: 'DATA' }));
    await same((s) => s.denials.facet('rule_source', { since: 7 * DAY }, { prefix: 'pol' }));
    await same((s) => s.denials.facet('tool', { q: 'prod' }, { prefix: 'r' }));
    const histogram = await same((s) => s.denials.histogram({}, { now }));
    expect(histogram.buckets.reduce((n, b) => n + b.total, 0)).toBe(denials.length);
    // Narrow windows: minute bars and hour bars.
    await same((s) => s.denials.histogram({ since: 3600 }, { now }));
    await same((s) => s.denials.histogram({ from: NOW - 2 * DAY, to: NOW }, { now }));
  });

  it('answer the live tail, the newest id and single rows alike', async () => {
    expect(await same((s) => s.denials.newestId())).toBe(denials.length);
    for (const f of [{}, { agent: 'train' }, { q: 'prod' }, { since: DAY }] as DenialMatch[]) {
      for (const after of [0, 100, 200, denials.length]) await same((s) => s.denials.newerThan(f, after));
    }
    for (const id of [1, 77, denials.length, denials.length + 1]) await same((s) => s.denials.get(id));
  });

  it('export the same rows in pages, from a cursor and through free text', async () => {
    for (const f of [{}, { agent: 'train' }, { q: 'prod' }, { q: '"trials": 500', since: 7 * DAY }, { cursor: '150' }, { ruleSource: 'policy', cursor: '90' }]) {
      const rows = await same((s) => collect(s.denials.iterate(f, 5)));
      expect(rows.map((r) => r.id)).toEqual([...rows.map((r) => r.id)].sort((a, b) => b - a));
    }
  });
});

describe('the security event reads on SQLite and PostgreSQL', () => {
  it('list the same rows for types, families (any case), actors, outcomes, decisions and windows', async () => {
    const filters: EventFilter[] = [
      {},
      { type: 'auth' },
      { type: 'AUTH' },
      { type: 'auth.login.failed' },
      { type: 'token' },
      { actor: 'olivia' },
      { outcome: 'failed' },
      { decisionId: 'dec-e3' },
      { since: DAY },
      { from: NOW - 5 * DAY, to: NOW - DAY },
      { type: 'auth', actor: 'otto', since: 7 * DAY },
      // Left out: a family (any case) or one exact type, alone or beside a type filter.
      { excludeType: 'auth' },
      { excludeType: 'AUTH' },
      { excludeType: 'auth.login.failed' },
      { type: 'auth', excludeType: 'auth.login' },
      { type: 'AUTH', excludeType: 'auth.login.succeeded', outcome: 'failed' },
      // A family's wildcards are literal: `a_th` is no family of `auth`, `%` none of anything.
      { type: 'a_th' },
      { type: '%' },
      { excludeType: '%' },
    ];
    for (const f of filters) {
      const { rows } = await same((s) => s.events.list(f));
      if (f.type === 'auth' || f.type === 'AUTH') expect(rows.every((r) => r.type === 'auth' || r.type.startsWith('auth.'))).toBe(true);
    }
    expect((await same((s) => s.events.list({}))).rows).toHaveLength(events.length);
    // The families match what they should: the drift between SQLite's LIKE and PostgreSQL's ILIKE is closed.
    const types = async (f: EventFilter) => new Set((await same((s) => s.events.list(f))).rows.map((r) => r.type));
    // (The family's own type is matched exactly, so `AUTH` leaves the type `auth` itself out, as it always has.)
    const seeded = new Set(events.map((e) => e.type));
    const loginTypes = [...seeded].filter((t) => t.startsWith('auth.'));
    expect(loginTypes.length).toBeGreaterThan(0);
    expect(await types({ type: 'AUTH' })).toEqual(new Set(loginTypes));
    expect(await types({ excludeType: 'Auth' })).toEqual(new Set([...seeded].filter((t) => !t.startsWith('auth.'))));
    expect((await same((s) => s.events.list({ type: 'a_th' }))).rows).toHaveLength(0);
  });

  it('page with the same cursors, and give the same rows of one type', async () => {
    let cursor: number | undefined;
    let seen = 0;
    do {
      const page = await same((s) => s.events.list({ type: 'auth', limit: 4, cursor }));
      seen += page.rows.length;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(seen).toBe((await sqlite.events.list({ type: 'auth' })).rows.length);
    await same((s) => s.events.ofType('flag.set'));
    await same((s) => s.events.ofType('audit', 3));
  });
});
