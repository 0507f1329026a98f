/**
 * The rate-limit window contract, run against both counters: SQLite (two connections to one file) and PostgreSQL (two
 * connection pools to the test run's throwaway cluster), each pair standing for two servers on one database; and
 * the hook runner over each, inside real engines: synchronous on SQLite, awaited on PostgreSQL.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import { parseAgents } from '@/lib/config/agents';
import { builtInSources, DEFAULT_FLAG_VALUES } from '@/lib/config/sources';
import { HookWouldWait, PermissionEngine, type CheckInput, type CheckResult, type Principal } from '@/lib/permissions';
import { EMPTY_POLICY } from '@/lib/permissions/policy';
import { TEST_AGENTS } from '@/lib/test-support/temp-app';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { parseHooks } from './config';
import { PostgresDatabase, SqliteDatabase } from '@/db/dialect';
import { SqliteRateCounter, SqlRateCounter, type RateCounter, type RateKey } from './rates';
import { HookRunner } from './runner';

interface TwoServers {
  a: RateCounter;
  b: RateCounter;
  /** the rows of a window in the table */
  rows(key: RateKey): Promise<number>;
  /** the database file (SQLite) */
  file?: string;
}

const pg15 = usePostgres();
const cleanups: (() => unknown)[] = [];
afterAll(() => {
  for (const c of cleanups.splice(0)) c();
});

/** SQLite twice: the decision path's synchronous counter, and the awaited one that PostgreSQL uses too (one transaction). */
async function sqliteServers(counter: (d: SqliteDatabase) => RateCounter): Promise<TwoServers> {
  const dir = mkdtempSync(join(tmpdir(), 'swarm-rates-contract-'));
  const [d1, d2] = [openDatabase({ path: join(dir, 'r.db') }), openDatabase({ path: join(dir, 'r.db') })];
  cleanups.push(() => {
    d1.$client.close();
    d2.$client.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    a: counter(new SqliteDatabase(d1.$client)),
    b: counter(new SqliteDatabase(d2.$client)),
    file: join(dir, 'r.db'),
    rows: async (k) => (d1.$client.prepare('SELECT count(*) AS n FROM hook_rate_calls WHERE hook = ? AND agent = ? AND tool = ?').get(k.hook, k.agent, k.tool) as { n: number }).n,
  };
}

const databases: Record<'SQLite' | 'SQLite, awaited' | 'PostgreSQL', () => Promise<TwoServers>> = {
  SQLite: () => sqliteServers((d) => new SqliteRateCounter(d)),
  'SQLite, awaited': () => sqliteServers((d) => new SqlRateCounter(d)),
  async PostgreSQL() {
    const name = await pg15.freshDatabase('rates');
    const [p1, p2] = [pg15.pool(name, 6), pg15.pool(name, 6)];
    return {
      a: new SqlRateCounter(new PostgresDatabase(p1)),
      b: new SqlRateCounter(new PostgresDatabase(p2)),
      rows: async (k) => (await p1.query<{ n: number }>('SELECT count(*) AS n FROM hook_rate_calls WHERE hook = $1 AND agent = $2 AND tool = $3', [k.hook, k.agent, k.tool])).rows[0]!.n,
    };
  },
};

const key = (hook: string, tool = 'monitor_drift'): RateKey => ({ hook, agent: 'deployer', tool });

describe.each(Object.keys(databases) as (keyof typeof databases)[])('rate-limit windows on %s, two servers', (kind) => {
  let s: TwoServers;
  it('counts one window per hook, agent and tool for both servers, and says when the next call is allowed', async () => {
    s = await databases[kind]();
    const t = Date.now() / 1000;
    expect(await s.a.take(key('two-a-minute'), 2, 60, t)).toEqual({ allowed: true, count: 1, retryInSeconds: 0 });
    expect(await s.b.take(key('two-a-minute'), 2, 60, t + 10)).toEqual({ allowed: true, count: 2, retryInSeconds: 0 });
    expect(await s.a.take(key('two-a-minute'), 2, 60, t + 20)).toEqual({ allowed: false, count: 2, retryInSeconds: 40 });
    // Other windows are counted apart.
    expect(await s.b.take(key('two-a-minute', 'fairness_audit'), 2, 60, t + 20)).toMatchObject({ allowed: true, count: 1 });
    expect(await s.b.take({ ...key('two-a-minute'), agent: 'evaluator' }, 2, 60, t + 20)).toMatchObject({ allowed: true, count: 1 });
    // The first call leaves the window: one slot is free again, for whichever server asks first.
    expect(await s.b.take(key('two-a-minute'), 2, 60, t + 60)).toEqual({ allowed: true, count: 2, retryInSeconds: 0 });
    expect(await s.a.take(key('two-a-minute'), 2, 60, t + 61)).toEqual({ allowed: false, count: 2, retryInSeconds: 9 });
    expect(await s.rows(key('two-a-minute'))).toBe(3);
  });

  it('gives the last slot of a window to exactly one of two servers racing for it', async () => {
    s ??= await databases[kind]();
    for (let round = 0; round < 6; round++) {
      const k = key(`race-${round}`);
      const t = Date.now() / 1000;
      for (let i = 0; i < 4; i++) expect((await (i % 2 ? s.a : s.b).take(k, 5, 60, t)).allowed).toBe(true);
      const racing = await Promise.all(Array.from({ length: 12 }, (_, i) => Promise.resolve().then(() => (i % 2 ? s.a : s.b).take(k, 5, 60, t))));
      expect(racing.filter((r) => r.allowed)).toHaveLength(1);
      expect(racing.find((r) => r.allowed)).toEqual({ allowed: true, count: 5, retryInSeconds: 0 });
      expect(racing.filter((r) => !r.allowed).every((r) => r.count === 5 && r.retryInSeconds === 60)).toBe(true);
      expect(await s.rows(k)).toBe(5);
    }
  });
});

/**
 * A process of its own racing for slots: at each round's moment (wall clock) it takes 40 times in a row from that
 * round's window and prints what it got. Two at once are two servers on one SQLite file, truly in parallel (one core each).
 */
const RACER = `
import Database from 'better-sqlite3';
import { SqliteDatabase } from './db/dialect.ts';
import { SqliteRateCounter } from './lib/hooks/rates.ts';
const db = new Database(process.env.RACE_DB, { timeout: 10000 });
const counter = new SqliteRateCounter(new SqliteDatabase(db));
const out = [];
for (let r = 0; r < Number(process.env.RACE_ROUNDS); r++) {
  const at = Number(process.env.RACE_START) + r * 200;
  while (Date.now() < at) {}
  for (let i = 0; i < 40; i++) out.push([r, counter.take({ hook: 'proc-' + r, agent: 'deployer', tool: 'monitor_drift' }, 50, 60, Number(process.env.RACE_NOW)).allowed]);
}
db.close();
process.stdout.write(JSON.stringify(out));
`;

function racer(file: string, start: number, rounds: number, now: number): Promise<[number, boolean][]> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', RACER], {
      cwd: process.cwd(),
      env: { ...process.env, RACE_DB: file, RACE_START: String(start), RACE_ROUNDS: String(rounds), RACE_NOW: String(now) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    p.stderr.on('data', (c: Buffer) => (err += c.toString()));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as [number, boolean][]) : reject(new Error(`racer exited ${code}: ${err}`))));
  });
}

describe('rate-limit windows on SQLite, two processes', () => {
  it('lets exactly the calls of a window through two processes taking at the same time, in parallel for real', async () => {
    const s = await databases.SQLite();
    const rounds = 8;
    const now = Date.now() / 1000;
    // Far enough ahead for the processes to start (tsx compiles the counter first).
    const start = Date.now() + 4_000;
    const runs = await Promise.all([0, 1].map(() => racer(s.file!, start, rounds, now)));
    const takes = runs.flat();
    expect(takes).toHaveLength(rounds * 80);
    for (let r = 0; r < rounds; r++) {
      // 80 takes for 50 slots: the last slot went to one of them, and none beyond it.
      expect(takes.filter(([round, allowed]) => round === r && allowed)).toHaveLength(50);
      expect(await s.rows(key(`proc-${r}`))).toBe(50);
    }
  }, 30_000);
});

// ---- the hook runner over either counter, in an engine ----

const agents = parseAgents(TEST_AGENTS);
const HOOKS = parseHooks('hooks:\n  - id: three-a-minute\n    event: before_tool_call\n    match: { tool: monitor_drift }\n    rate_limit: { calls: 3, per: 1m }\n', 'hooks.yaml');
const deployer: Principal = { kind: 'agent', id: 'deployer', role: 'viewer', agent: 'deployer' };
const call = (i: number): CheckInput => ({ kind: 'tool', principal: deployer, agent: 'deployer', tool: 'monitor_drift', arguments: { i } });

function engineOver(rates: RateCounter) {
  const runner = new HookRunner({ hooks: () => HOOKS, flags: () => DEFAULT_FLAG_VALUES, cwd: tmpdir(), onFailure: () => {}, rates });
  const engine = new PermissionEngine({
    sources: () => builtInSources(() => agents, () => EMPTY_POLICY),
    ports: { async: rates.async === true, flagValues: () => DEFAULT_FLAG_VALUES, callHooks: runner },
  });
  return { runner, engine };
}

const verdicts = (results: readonly CheckResult[]) => results.map((r) => (r.decision === 'ALLOW' ? 'ALLOW' : `${r.decision} ${r.ruleSource}`));

describe('the hook runner over either counter', () => {
  it('decides synchronously on SQLite: a rate_limit hook never makes decide() wait', async () => {
    const s = await databases.SQLite();
    const [a, b] = [engineOver(s.a), engineOver(s.b)];
    expect(a.runner.beforeMayWait()).toBe(false);
    const results = [a, b, a, b].map((x, i) => x.engine.decide(call(i)));
    expect(verdicts(results)).toEqual(['ALLOW', 'ALLOW', 'ALLOW', 'DENY hook:three-a-minute']);
    expect(results[3]!.reason).toMatch(/3 calls of monitor_drift by deployer per 60s; the next is allowed in \d+s/);
    expect(results[0]!.hooks).toEqual([{ hook: 'three-a-minute', event: 'before_tool_call', action: 'rate_limit', outcome: 'passed', reason: '1 of 3 in 60s' }]);
  });

  it('awaits the counter on PostgreSQL: both servers share the window, racing engines let exactly its calls through', async () => {
    const s = await databases.PostgreSQL();
    const [a, b] = [engineOver(s.a), engineOver(s.b)];
    // The decision listener leaves such calls to a process that can wait; a synchronous pass refuses before counting.
    expect(a.runner.beforeMayWait()).toBe(true);
    expect(() => a.engine.prepare(call(0), { sync: true })).toThrow(HookWouldWait);
    expect(await s.rows(key('three-a-minute'))).toBe(0);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).engine.decideAsync(call(i))));
    expect(results.filter((r) => r.decision === 'ALLOW')).toHaveLength(3);
    expect(results.filter((r) => r.decision === 'DENY' && r.ruleSource === 'hook:three-a-minute')).toHaveLength(7);
    expect(results.find((r) => r.decision === 'DENY')!.reason).toMatch(/3 calls of monitor_drift by deployer per 60s; the next is allowed in \d+s/);
    expect(await s.rows(key('three-a-minute'))).toBe(3);
  });
});
