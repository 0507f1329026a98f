/**
 * The check endpoint under load, against the machine's limit: autocannon on loopback, with the same connections and
 * body, against
 *   - a bare node:http server doing only the JSON round trip of a check (bench/bare-server.ts): the reference;
 *   - the product's server as `npm start` runs it (scripts/start.ts): the decision listener on its port answering
 *     `POST /api/v1/permissions/check` (one allowed call, and a mix with durable denials and approvals) and the batch
 *     route (100 calls a request);
 *   - the same server with one listener process (SWARM_LISTENER_WORKERS=1): what the worker processes bought;
 *   - the same check route served by Next.js itself (the loopback port behind the listener): what the listener bought;
 *   - the same server on PostgreSQL (a throwaway cluster with its durable defaults, started in a temporary folder:
 *     SWARM_DB=postgres://…), one allowed call and the mix, when PostgreSQL is installed (CI installs it).
 *
 *   node --import tsx bench/http.ts
 *
 * The server gets a fresh database in a temporary folder (SWARM_DB), the repository's config (SWARM_CONFIG_DIR=config)
 * and SWARM_ADMIN_TOKEN. Before it starts, agent tokens are created in that database (what `swarm tokens add --agent`
 * does), so that every call is made by an agent with its own token, as in production. The build is reused
 * (`.next/BUILD_ID`, or NEXT_DIST_DIR); `npx next build` runs only when there is none. The servers are stopped at the end.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createApp, openApp } from '@/lib/app';
import { loadOrCreateSigningKey } from '@/lib/audit/trail/checkpoints';
import { postgresBin, startPostgres, type PgCluster } from '@/lib/test-support/postgres';
import { freePort } from '@/lib/server/serve';
import { listenerWorkers, WORKERS_ENV } from '@/lib/server/workers';
import type { Decision } from '@/lib/permissions/types';
import { fmt, fmtInt, isMain, markdownTable } from './util';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const HOST = '127.0.0.1';
const ADMIN_TOKEN = 'bench-http-admin-token-0123456789abcdef';

/** The check endpoint answers at no less than half the bare server's rate (issue 13). */
export const HTTP_TARGET = 0.5;
export const BATCH_SIZE = 100;
/** One measurement slice: a route's rate is compared with the reference's in the slices beside it. */
const SLICE_SEC = 2;

/** One tool call of the mix, made by `agent` with its own token; `expect` is checked before the load starts. */
interface Call {
  agent: string;
  tool: string;
  arguments: Record<string, unknown>;
  expect: Decision;
}

/** The common case: an agent calling a tool of its allowlist. */
const ALLOWED_CALL: Call = {
  agent: 'data_cleaner',
  tool: 'profile_dataset',
  arguments: { dataset_id: 'ds_sales_2024', env: 'staging', limit: 1000, contains_pii: false },
  expect: 'ALLOW',
};

/**
 * A realistic mix over the agents of config/agents.yaml, close to the engine workload's (65% ALLOW, 30% DENY, 5% ASK):
 * every DENY is written to `permission_denials` before the answer (a durable write), every ASK finds (or creates,
 * the first time) the pending approval of that exact call.
 */
const MIX: readonly [Call, number][] = [
  [ALLOWED_CALL, 3],
  [{ agent: 'data_cleaner', tool: 'clean_dataset', arguments: { dataset_id: 'ds_clicks', rules: ['dedupe'] }, expect: 'ALLOW' }, 2],
  [{ agent: 'trainer', tool: 'train_model', arguments: { dataset_id: 'ds_events', algorithm: 'xgboost' }, expect: 'ALLOW' }, 2],
  [{ agent: 'evaluator', tool: 'evaluate_model', arguments: { model_id: 'churn-v7' }, expect: 'ALLOW' }, 2],
  [{ agent: 'deployer', tool: 'monitor_drift', arguments: { model_id: 'churn-v6' }, expect: 'ALLOW' }, 2],
  [{ agent: 'compliance_agent', tool: 'generate_report', arguments: { period: '2024-Q4' }, expect: 'ALLOW' }, 2],
  [{ agent: 'data_cleaner', tool: 'train_model', arguments: { dataset_id: 'ds_sales', algorithm: 'lr' }, expect: 'DENY' }, 2],
  [{ agent: 'evaluator', tool: 'deploy_serving', arguments: { model_id: 'churn-v7', env: 'prod' }, expect: 'DENY' }, 2],
  [{ agent: 'trainer', tool: 'export_raw_data', arguments: { dataset_id: 'pii_customers' }, expect: 'DENY' }, 2],
  [{ agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'churn-v7', env: 'prod' }, expect: 'ASK' }, 1],
];

export interface HttpRow {
  label: string;
  method: string;
  path: string;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  total: number;
  non2xx: number;
  errors: number;
  /** requests/s ÷ the bare server's in the slices beside this row's */
  ratio?: number;
  /** the reference's requests/s in the slices beside this row's (the ratio's denominator) */
  referenceBeside?: number;
  /** the ratio this row must reach (rows without one are there to compare) */
  target?: number;
  /** decisions per request (a batch) */
  perRequest?: number;
  /** the server on PostgreSQL */
  postgres?: boolean;
}

export interface HttpBenchResult {
  connections: number;
  durationSec: number;
  warmUpSec: number;
  built: boolean;
  mix: Record<Decision, number>;
  rows: HttpRow[];
  serverStartMs: number;
  /** the decision listener processes of the server measured (SWARM_LISTENER_WORKERS, else its default here) */
  workers: number;
}

export interface HttpBenchOptions {
  connections?: number;
  durationSec?: number;
  warmUpSec?: number;
  /** also measure the server on PostgreSQL (default: when PostgreSQL is installed) */
  postgres?: boolean;
  /**
   * measure only the routes whose label holds one of these (and the reference): BENCH_HTTP_ONLY="PostgreSQL" for the
   * rows on PostgreSQL, with "one allowed call (" for the SQLite server's allowed call beside them
   */
  only?: readonly string[];
  log?: (line: string) => void;
}

/** Reuse the production build, or run `npx next build` when there is none (the soak starts the same server). */
export function ensureBuild(env: NodeJS.ProcessEnv, log: (l: string) => void): boolean {
  const dist = env.NEXT_DIST_DIR || '.next';
  if (existsSync(join(ROOT, dist, 'BUILD_ID'))) return false;
  log(`http: no build in ${dist}/, running npx next build (this takes a while)`);
  const r = spawnSync('npx', ['next', 'build'], { cwd: ROOT, env, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`npx next build failed (exit ${r.status})`);
  return true;
}

export async function waitUp(url: string, child: ChildProcess, output: () => string): Promise<void> {
  // (a minute is plenty on an idle machine; a shared one under load has taken longer to start three servers)
  const end = Date.now() + 180_000;
  while (Date.now() < end) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}) before answering:\n${output()}`);
    try {
      if ((await fetch(`${url}/api/v1/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the server did not answer on ${url} within 180 s:\n${output()}`);
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

const bodyOf = (c: Call, i: number): string =>
  JSON.stringify({ agent: c.agent, tool: c.tool, arguments: c.arguments, tool_call_id: `bench-${c.agent}-${c.tool}-${i}` });

async function load(opts: autocannon.Options): Promise<autocannon.Result> {
  return await autocannon(opts);
}

export function spawnLogged(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (b: Buffer) => {
    output = (output + b.toString()).slice(-4_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { child, output: () => output };
}

async function waitListening(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const end = Date.now() + 60_000;
  while (Date.now() < end) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}) before answering:\n${output()}`);
    try {
      await fetch(url, { method: 'POST', body: '{}' });
      return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing answered on ${url} within 60 s:\n${output()}`);
}

export async function runHttpBench(options: HttpBenchOptions = {}): Promise<HttpBenchResult> {
  const log = options.log ?? (() => undefined);
  const connections = options.connections ?? 10;
  const durationSec = options.durationSec ?? 8;
  const warmUpSec = options.warmUpSec ?? 2;
  const dir = mkdtempSync(join(process.env.BENCH_TMPDIR ?? tmpdir(), 'swarm-bench-http-'));
  const [port, nextPort, barePort] = [await freePort(), await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    PORT: String(port),
    SWARM_NEXT_PORT: String(nextPort),
    SWARM_DB: join(dir, 'swarm.db'),
    SWARM_CONFIG_DIR: 'config',
    SWARM_PROFILE: '',
    SWARM_ADMIN_TOKEN: ADMIN_TOKEN,
    SWARM_ADMIN_PASSWORD: 'bench-http-admin-password',
    // A throwaway benchmark database: its signing key may sit beside it (a real server refuses that).
    SWARM_AUDIT_KEY_BESIDE_DB: '1',
  };
  const children: ChildProcess[] = [];
  let cluster: PgCluster | undefined;
  try {
    const built = ensureBuild(env, log);

    // Agent tokens in the server's database, before it starts (as `swarm tokens add --agent NAME`).
    const agents = [...new Set(MIX.map(([c]) => c.agent))];
    const tokens = new Map<string, string>();
    const app = createApp({ dbPath: env.SWARM_DB!, configDir: join(ROOT, 'config'), env });
    try {
      await app.bootstrap();
      for (const a of agents) tokens.set(a, await app.auth.createToken({ agent: a }, 'bench/http.ts'));
    } finally {
      app.close();
    }
    const tokenOf = (agent: string): string => tokens.get(agent) ?? ADMIN_TOKEN;

    // The same server on PostgreSQL, with its own agent tokens (as `swarm tokens add --agent NAME` on that database).
    const onPg = options.postgres ?? postgresBin() !== undefined;
    const pgTokens = new Map<string, string>();
    let pgEnv: NodeJS.ProcessEnv | undefined;
    if (onPg) {
      cluster = await startPostgres({ durable: true });
      pgEnv = { ...env, PORT: String(await freePort()), SWARM_NEXT_PORT: String(await freePort()), SWARM_DB: cluster.url, SWARM_AUDIT_KEY_DIR: join(dir, 'pg-keys') };
      loadOrCreateSigningKey(pgEnv.SWARM_AUDIT_KEY_DIR!);
      const pgApp = await openApp({ dbPath: pgEnv.SWARM_DB!, configDir: join(ROOT, 'config'), env: pgEnv });
      try {
        await pgApp.bootstrap();
        for (const a of agents) pgTokens.set(a, await pgApp.auth.createToken({ agent: a }, 'bench/http.ts'));
      } finally {
        await pgApp.close();
      }
    }

    const url = `http://${HOST}:${port}`;
    const nextUrl = `http://${HOST}:${nextPort}`;
    const bareUrl = `http://${HOST}:${barePort}`;
    const s0 = performance.now();
    const product = spawnLogged(['--import', 'tsx', 'scripts/start.ts'], env);
    children.push(product.child);
    await waitUp(url, product.child, product.output);
    const serverStartMs = performance.now() - s0;
    log(`http: server up on ${url} (Next.js behind it on ${nextPort}) in ${serverStartMs.toFixed(0)} ms (database ${env.SWARM_DB})`);
    const pgUrl = pgEnv ? `http://${HOST}:${pgEnv.PORT}` : undefined;
    if (pgEnv && pgUrl) {
      const pgServer = spawnLogged(['--import', 'tsx', 'scripts/start.ts'], pgEnv);
      children.push(pgServer.child);
      await waitUp(pgUrl, pgServer.child, pgServer.output);
      log(`http: the same server on PostgreSQL up on ${pgUrl} (${cluster!.url})`);
    }
    // The same server with one listener process (SWARM_LISTENER_WORKERS=1): what the worker processes buy.
    const oneEnv: NodeJS.ProcessEnv = { ...env, PORT: String(await freePort()), SWARM_NEXT_PORT: String(await freePort()), [WORKERS_ENV]: '1' };
    const oneUrl = `http://${HOST}:${oneEnv.PORT}`;
    const one = spawnLogged(['--import', 'tsx', 'scripts/start.ts'], oneEnv);
    children.push(one.child);
    await waitUp(oneUrl, one.child, one.output);
    const bare = spawnLogged(['--import', 'tsx', 'bench/bare-server.ts', String(barePort)], env);
    children.push(bare.child);
    await waitListening(bareUrl, bare.child, bare.output);

    // Every call of the mix once, as it will be sent: the decision must be the expected one, on both paths.
    const checkPath = '/api/v1/permissions/check';
    const headersFor = (agent: string, on: ReadonlyMap<string, string> = tokens): Record<string, string> => ({
      authorization: `Bearer ${on === tokens ? tokenOf(agent) : (on.get(agent) ?? ADMIN_TOKEN)}`,
      'content-type': 'application/json',
    });
    const targets: [string, ReadonlyMap<string, string>][] = [[url, tokens], [oneUrl, tokens], [nextUrl, tokens], ...(pgUrl ? [[pgUrl, pgTokens] as [string, ReadonlyMap<string, string>]] : [])];
    for (const [target, on] of targets) {
      for (const [c] of MIX) {
        const res = await fetch(`${target}${checkPath}`, { method: 'POST', headers: headersFor(c.agent, on), body: bodyOf(c, 0) });
        const json = (await res.json()) as { decision?: string; rule_source?: string; error?: { message?: string } };
        if (res.status !== 200 || json.decision !== c.expect) {
          throw new Error(
            `http: ${c.agent} -> ${c.tool} answered ${res.status} ${json.decision ?? json.error?.message ?? ''} (${json.rule_source ?? ''}), ` +
              `expected ${c.expect}: config/ changed? Adjust MIX in bench/http.ts.`,
          );
        }
      }
    }

    const base = { connections, timeout: 10 } as const;
    const allowedBody = bodyOf(ALLOWED_CALL, 0);
    const reference: autocannon.Options = { ...base, url: `${bareUrl}${checkPath}`, method: 'POST', headers: headersFor(ALLOWED_CALL.agent), body: allowedBody };
    const allowed: autocannon.Options = { ...base, url: `${url}${checkPath}`, method: 'POST', headers: headersFor(ALLOWED_CALL.agent), body: allowedBody };
    const viaNext: autocannon.Options = { ...allowed, url: `${nextUrl}${checkPath}` };
    const mixOf = (on: ReadonlyMap<string, string>): autocannon.Request[] => {
      const requests: autocannon.Request[] = [];
      let n = 0;
      for (const [c, weight] of MIX) for (let k = 0; k < weight; k++) requests.push({ method: 'POST', path: checkPath, headers: headersFor(c.agent, on), body: bodyOf(c, n++) });
      // interleave: one request of each kind in turn rather than runs of the same call
      return requests.sort((a, b) => hashOf(String(a.body)) - hashOf(String(b.body)));
    };
    const mixRequests = mixOf(tokens);
    const mixed: autocannon.Options = { ...base, url: `${url}${checkPath}`, method: 'POST', requests: mixRequests };
    const mix: Record<Decision, number> = { ALLOW: 0, DENY: 0, ASK: 0 };
    for (const [c, weight] of MIX) mix[c.expect] += weight;
    // A batch of the data cleaner's calls (its token decides for itself only): allowed and denied, one transaction.
    const cleanerCalls = MIX.map(([c]) => c).filter((c) => c.agent === ALLOWED_CALL.agent);
    const batchBody = JSON.stringify({
      checks: Array.from({ length: BATCH_SIZE }, (_, i) => {
        const c = cleanerCalls[i % cleanerCalls.length]!;
        return { agent: c.agent, tool: c.tool, arguments: c.arguments, tool_call_id: `bench-batch-${i}` };
      }),
    });
    const batch: autocannon.Options = { ...base, url: `${url}${checkPath}/batch`, method: 'POST', headers: headersFor(ALLOWED_CALL.agent), body: batchBody };

    const everyScenario: [string, autocannon.Options, { target?: number; perRequest?: number; postgres?: boolean }][] = [
      ['bare node:http server, the JSON round trip only (reference)', reference, {}],
      [`POST check via the decision listener: one allowed call (${ALLOWED_CALL.agent} -> ${ALLOWED_CALL.tool})`, allowed, { target: HTTP_TARGET }],
      [`POST check via the decision listener: mix of ${mixRequests.length} calls, ${agents.length} agents`, mixed, { target: HTTP_TARGET }],
      [`POST check/batch via the decision listener: ${BATCH_SIZE} calls a request (decisions/s)`, batch, { perRequest: BATCH_SIZE }],
      ['POST check via one listener process (SWARM_LISTENER_WORKERS=1): one allowed call', { ...allowed, url: `${oneUrl}${checkPath}` }, {}],
      ['POST check via one listener process (SWARM_LISTENER_WORKERS=1): the same mix', { ...mixed, url: `${oneUrl}${checkPath}` }, {}],
      ['POST check served by Next.js itself (before the listener): one allowed call', viaNext, {}],
      ...(pgUrl
        ? ([
            ['POST check via the decision listener on PostgreSQL: one allowed call', { ...allowed, url: `${pgUrl}${checkPath}`, headers: headersFor(ALLOWED_CALL.agent, pgTokens) }, { postgres: true }],
            [`POST check via the decision listener on PostgreSQL: the same mix`, { ...mixed, url: `${pgUrl}${checkPath}`, requests: mixOf(pgTokens) }, { postgres: true }],
          ] as [string, autocannon.Options, { postgres: boolean }][])
        : []),
    ];
    const only = options.only;
    const scenarios = only ? everyScenario.filter(([label], i) => i === 0 || only.some((k) => label.includes(k))) : everyScenario;
    for (const [label, o] of scenarios) {
      const w = await load({ ...o, duration: warmUpSec });
      if (w.non2xx > 0 || w.errors > 0) throw new Error(`http: warm-up of "${label}": ${w.non2xx} non-2xx, ${w.errors} errors`);
    }
    // Paired slices: each route is measured in slices of SLICE_SEC, each one next to a slice of the reference, in ABBA
    // order (reference, route, route, reference, ...), and its ratio is its requests over the reference's requests in
    // those slices. This machine's speed drifts by tens of per cent within a minute; compared seconds apart, the two
    // see the same machine. The reference's own row sums all its slices.
    const rows: HttpRow[] = scenarios.map(([label, o, extra]) => ({
      label,
      method: String(o.method),
      path: new URL(o.url).pathname,
      requestsPerSec: 0,
      p50Ms: 0,
      p99Ms: 0,
      total: 0,
      non2xx: 0,
      errors: 0,
      ...extra,
    }));
    const seconds = new Array<number>(scenarios.length).fill(0);
    const slice = async (i: number): Promise<number> => {
      const [label, o] = scenarios[i]!;
      const r = await load({ ...o, duration: SLICE_SEC });
      const row = rows[i]!;
      row.total += r.requests.total;
      row.non2xx += r.non2xx;
      row.errors += r.errors;
      row.p50Ms = Math.max(row.p50Ms, r.latency.p50);
      row.p99Ms = Math.max(row.p99Ms, r.latency.p99);
      seconds[i] = (seconds[i] ?? 0) + r.duration;
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`http: "${label}" had ${r.non2xx} non-2xx answers and ${r.errors} errors`);
      return r.requests.total / r.duration;
    };
    const slices = Math.max(2, 2 * Math.round(durationSec / SLICE_SEC / 2));
    for (let i = 1; i < scenarios.length; i++) {
      let own = 0;
      let reference = 0;
      for (let k = 0; k < slices; k++) {
        // ABBA: the reference first in even slices, second in odd ones
        if (k % 2 === 0) reference += await slice(0);
        own += await slice(i);
        if (k % 2 === 1) reference += await slice(0);
      }
      rows[i]!.ratio = own / reference;
      rows[i]!.referenceBeside = reference / slices;
      log(`http: ${scenarios[i]![0]}: ${fmtInt(own / slices)} req/s, ${(100 * rows[i]!.ratio!).toFixed(0)}% of the reference beside it (${fmtInt(reference / slices)} req/s)`);
    }
    rows.forEach((row, i) => (row.requestsPerSec = row.total / (seconds[i] ?? Number.NaN)));
    return { connections, durationSec, warmUpSec, built, mix, rows, serverStartMs, workers: listenerWorkers(env) };
  } finally {
    for (const c of children.reverse()) await stop(c);
    cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A small stable hash (FNV-1a) to interleave the mix deterministically. */
function hashOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

export function formatHttpResult(r: HttpBenchResult): string {
  const total = r.mix.ALLOW + r.mix.DENY + r.mix.ASK;
  const pct = (v: number) => `${Math.round((100 * v) / total)}%`;
  const single = r.rows.find((row) => row.target !== undefined);
  const table = markdownTable(
    ['route', 'requests/s', 'decisions/s', 'p50 ms', 'p99 ms', 'requests', 'non-2xx', 'vs bare server', 'target', ''],
    r.rows.map((row) => [
      row.label,
      fmtInt(row.requestsPerSec),
      fmtInt(row.requestsPerSec * (row.perRequest ?? 1)),
      fmt(row.p50Ms),
      fmt(row.p99Ms),
      fmtInt(row.total),
      String(row.non2xx),
      row.ratio === undefined ? '100%' : row.perRequest ? `${(100 * row.ratio * row.perRequest).toFixed(0)}% in decisions` : `${(100 * row.ratio).toFixed(0)}%`,
      row.target === undefined ? '–' : `≥ ${Math.round(row.target * 100)}%`,
      row.target === undefined || row.ratio === undefined ? '' : row.ratio >= row.target ? 'met' : 'MISSED',
    ]),
  );
  const batch = r.rows.find((row) => row.perRequest !== undefined);
  const next = r.rows.find((row) => row.label.startsWith('POST check served by Next.js'));
  const pgMix = r.rows.find((row) => row.postgres && row.label.includes('mix'));
  const sqliteMix = r.rows.find((row) => !row.postgres && row.label.includes('mix'));
  return [
    `autocannon on loopback, ${r.connections} connections, the same body and headers for the bare server and the check route, ` +
      `${r.durationSec} s per route in slices of ${SLICE_SEC} s, each beside a slice of the bare server in ABBA order; "vs bare server" ` +
      `compares a route with the reference in the slices beside it (the machine's speed drifts within a minute), requests/s = ` +
      `requests ÷ time, latencies = the worst slice; after ${r.warmUpSec} s of warm-up each; the load generator runs on the same machine. The product ` +
      `runs as \`npm start\` runs it (production build${r.built ? ', built for this run' : ''}; ${r.workers} decision listener process${r.workers === 1 ? '' : 'es'}): every request carries an agent token, a DENY ` +
      `is written to the database before the answer. Mix: ALLOW ${pct(r.mix.ALLOW)}, DENY ${pct(r.mix.DENY)}, ASK ${pct(r.mix.ASK)}.`,
    '',
    table,
    '',
    single && next ? `The decision listener answers ${fmt(single.requestsPerSec / next.requestsPerSec)}× the check requests/s Next.js did for the same route.` : '',
    single && batch ? `Batches of ${batch.perRequest}: ${fmtInt(batch.requestsPerSec * (batch.perRequest ?? 1))} decisions/s, ${fmt((batch.requestsPerSec * (batch.perRequest ?? 1)) / single.requestsPerSec)}× single checks.` : '',
    pgMix && sqliteMix
      ? `On PostgreSQL (durable defaults, one server; the recorder commits concurrent denials together) the mix runs at ${fmt(pgMix.requestsPerSec / sqliteMix.requestsPerSec)}× the SQLite server's rate.`
      : 'PostgreSQL is not installed here: the PostgreSQL rows were not measured.',
  ].join('\n');
}

if (isMain(import.meta.url)) {
  runHttpBench({ log: (l) => console.error(l), only: process.env.BENCH_HTTP_ONLY?.split(',') })
    .then((r) => console.log(formatHttpResult(r)))
    .catch((e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exitCode = 1;
    });
}
