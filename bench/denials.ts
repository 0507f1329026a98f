/**
 * Denial recorder benchmark: durable denial writes per second through the real recorder (hash-chained rows), on a real
 * SQLite file in a temporary directory (openDatabase runs the committed migrations and sets WAL and the synchronous
 * mode), beside the same rows written by a plain INSERT without the chain (the writer before tamper evidence), in the
 * same run.
 *
 *   node --import tsx bench/denials.ts
 *   node --import tsx bench/denials.ts --chain-only [seconds]   (only the chain's cost, as `npm run bench` measures it)
 *
 * Every row is its own transaction: the row is committed before appendDenial() returns, as the engine's recorder
 * requires. Measured for a few seconds each in synchronous NORMAL (the default) and FULL, alone and
 * with one concurrent reader (a worker thread with its own read-only connection running the console's "latest denials
 * of an agent" query in a loop).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { openDatabase, SERVER_WAL_AUTOCHECKPOINT_PAGES, type SyncMode } from '@/db/client';
import { startCheckpointer } from '@/db/checkpointer';
import { AuditRecorder, denialOfDecision, type DenialInput } from '@/lib/audit/trail/recorder';
import type { DecisionEvent } from '@/lib/permissions';
import { newDecisionId } from '@/lib/permissions/decision-id';
import { parsePolicy } from '@/lib/permissions/policy';
import { buildEngine, buildWorld, generatePolicy, generateWorkload } from './engine';
import type { ReaderData } from './denials-reader';
import { fmt, fmtInt, isMain, markdownTable, nowNs, Samples } from './util';

export interface DenialsRow {
  label: string;
  sync: SyncMode;
  reader: boolean;
  writes: number;
  seconds: number;
  writesPerSec: number;
  p50Us: number;
  p99Us: number;
  p999Us: number;
  maxUs: number;
  /** queries per second of the concurrent reader during the measurement */
  readerQueriesPerSec?: number;
  /** size of the -wal file at the end */
  walMB: number;
  /** what the connection reports, as a check: journal_mode and synchronous (1 NORMAL, 2 FULL) */
  pragmas: string;
  /** chained: the recorder (prev_hash, row_hash computed in the write transaction); plain: an INSERT without the chain */
  writer: 'chained' | 'plain';
}

/** The cost of the chain, measured with both writers open at once and alternating in short slices (ABBA order). */
export interface ChainCost {
  plainPerSec: number;
  chainedPerSec: number;
  /** 1 - chained / plain */
  cost: number;
  slices: number;
  sliceMs: number;
  /** the cost measured in each quarter of the slices, to show the spread */
  quarterCosts: number[];
}

export interface DenialsBenchResult {
  dir: string;
  seconds: number;
  seedRows: number;
  avgRowBytes: number;
  rows: DenialsRow[];
  chainCost: ChainCost;
  decisionLog: DecisionLogRate;
}

/** decision_log_all: allowed decisions recorded (security_events) beside denials (permission_denials), interleaved. */
export interface DecisionLogRate {
  deniedPerSec: number;
  allowedPerSec: number;
  /** allowed / denied */
  ratio: number;
  slices: number;
}

export interface DenialsBenchOptions {
  /** measurement time per scenario (default 3 s) */
  seconds?: number;
  /** where the temporary directory is created (default os.tmpdir(), or BENCH_TMPDIR) */
  baseDir?: string;
  log?: (line: string) => void;
}

/** Real decisions of the engine benchmark's workload, DENY and ALLOW, as the engine hands them to the recorder. */
function decisionEvents(count: number): { denied: DecisionEvent[]; allowed: DecisionEvent[] } {
  const world = buildWorld();
  const gen = generatePolicy(world, 1_000);
  const { engine } = buildEngine(world, parsePolicy(gen.text));
  const denied: DecisionEvent[] = [];
  const allowed: DecisionEvent[] = [];
  for (const ctx of generateWorkload(world, gen.hints, 40_000)) {
    const result = engine.check(ctx);
    const list = result.decision === 'DENY' ? denied : result.decision === 'ALLOW' ? allowed : undefined;
    if (list && list.length < count) list.push({ kind: 'tool', context: { ...ctx, flags: world.flagValues }, result });
    if (denied.length === count && allowed.length === count) break;
  }
  return { denied, allowed };
}

/**
 * decision_log_all at the throughput of denials: the recorder's record() of allowed decisions (a security event with
 * the masked arguments and the trace, chained) against its record() of denied ones, each on its own file in the
 * server's mode, taking turns in 200 ms slices (ABBA).
 */
async function decisionLogRate(dir: string, seconds: number): Promise<DecisionLogRate> {
  const { denied, allowed } = decisionEvents(1_024);
  const sliceMs = 200;
  const writers = (['denied', 'allowed'] as const).map((kind) => {
    const path = join(dir, `decision-log-${kind}.db`);
    const db = openDatabase({ path, sync: 'normal', walAutocheckpointPages: SERVER_WAL_AUTOCHECKPOINT_PAGES });
    const recorder = new AuditRecorder(db.$client, { revision: () => 'rev_0123456789abcdef0123456789abcdef', logAllDecisions: () => true });
    const events = kind === 'denied' ? denied : allowed;
    let i = 0;
    const write = () => {
      const e = events[i++ % events.length]!;
      recorder.record({ ...e, result: { ...e.result, decisionId: newDecisionId() } });
    };
    return { db, checkpointer: startCheckpointer(path), write, writes: 0, ns: 0n };
  });
  for (const w of writers) for (let i = 0; i < 500; i++) w.write();
  const slices = Math.max(8, Math.round((2 * seconds * 1000) / sliceMs / 4) * 4);
  for (let s = 0; s < slices; s++) {
    const w = writers[s % 4 === 0 || s % 4 === 3 ? 0 : 1]!;
    const start = nowNs();
    const end = start + BigInt(sliceMs * 1e6);
    let t = start;
    let count = 0;
    while (t < end) {
      w.write();
      count++;
      t = nowNs();
    }
    w.writes += count;
    w.ns += t - start;
  }
  for (const w of writers) {
    await w.checkpointer.stop();
    w.db.$client.close();
  }
  const [deniedPerSec, allowedPerSec] = writers.map((w) => w.writes / (Number(w.ns) / 1e9)) as [number, number];
  return { deniedPerSec, allowedPerSec, ratio: allowedPerSec / deniedPerSec, slices };
}

/** Real denials: the DENY decisions of the engine benchmark's workload, turned into rows like the app does. */
function denialInputs(count: number): { inputs: DenialInput[]; agents: string[] } {
  const world = buildWorld();
  const gen = generatePolicy(world, 1_000);
  const { engine } = buildEngine(world, parsePolicy(gen.text));
  const inputs: DenialInput[] = [];
  for (const ctx of generateWorkload(world, gen.hints, 20_000)) {
    const result = engine.check(ctx);
    if (result.decision !== 'DENY') continue;
    inputs.push({ ...denialOfDecision({ ...ctx, flags: world.flagValues }, result), policyRevision: 'rev_0123456789abcdef0123456789abcdef' });
    if (inputs.length === count) break;
  }
  return { inputs, agents: [...world.agents] };
}

const READER_BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
import(workerData.loader).then((tsx) => tsx.tsImport(workerData.entry, workerData.entry));
`;

interface Reader {
  worker: Worker;
  control: Int32Array;
  stop(): Promise<void>;
}

async function startReader(path: string, agents: readonly string[]): Promise<Reader> {
  const shared = new SharedArrayBuffer(8);
  const control = new Int32Array(shared);
  const data: ReaderData & { entry: string; loader: string } = {
    path,
    agents,
    control: shared,
    entry: new URL('./denials-reader.ts', import.meta.url).href,
    loader: import.meta.resolve('tsx/esm/api'),
  };
  // Node 20 does not carry `--import tsx` into worker threads: the worker loads tsx's API, then the TypeScript reader.
  const worker = new Worker(READER_BOOTSTRAP, { eval: true, workerData: data });
  const done = new Promise<void>((resolve, reject) => {
    worker.on('message', (m: { type?: string }) => {
      if (m.type === 'done') resolve();
    });
    worker.on('error', reject);
    worker.on('exit', () => resolve());
  });
  await new Promise<void>((resolve, reject) => {
    worker.on('message', (m: { type?: string }) => {
      if (m.type === 'ready') resolve();
    });
    worker.once('error', reject);
  });
  return {
    worker,
    control,
    async stop() {
      Atomics.store(control, 0, 1);
      await done;
      await worker.terminate();
    },
  };
}

const SEED_ROWS = 20_000;

/** One durable denial write, as the product does it (chained) or as the writer before the evidence trail did (plain). */
function denialWriter(sqlite: Database.Database, writer: 'chained' | 'plain'): (d: DenialInput) => void {
  if (writer === 'chained') {
    const recorder = new AuditRecorder(sqlite, { revision: () => null, logAllDecisions: () => false });
    // what the recorder writes for each decision: a new decision id, the revision, the chain
    return (d) => void recorder.appendDenial({ ...d, decisionId: newDecisionId() });
  }
  // The reference: the denial writer as it was before the evidence trail, one autocommit INSERT of the spec's columns.
  const plainInsert = sqlite.prepare(
    `INSERT INTO permission_denials (tool_call_id, tool_name, agent_name, arguments_json, rule_source, reason,
       user_role, http_method, http_path, timestamp, principal, trace_json)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  return (d) =>
    void plainInsert.run(
      d.toolCallId ?? null, d.toolName, d.agentName ?? null, d.argumentsJson ?? null, d.ruleSource, d.reason ?? null, d.userRole ?? null,
      d.httpMethod ?? null, d.httpPath ?? null, Date.now() / 1000, d.principal ?? null, d.traceJson ?? null,
    );
}

/** Seed rows so that readers have something to read (one transaction, not measured), then start from an empty WAL. */
function seed(sqlite: Database.Database, inputs: readonly DenialInput[]): void {
  const recorder = new AuditRecorder(sqlite, { revision: () => null, logAllDecisions: () => false });
  sqlite.transaction(() => {
    for (let i = 0; i < SEED_ROWS; i++) recorder.appendDenial(inputs[i % inputs.length]!);
  })();
  sqlite.pragma('wal_checkpoint(TRUNCATE)');
}

/**
 * The chain's cost: the plain writer and the recorder, each on its own file in the server's mode (WAL + NORMAL,
 * background checkpoints), both open at once and taking turns in short slices in ABBA order, so that a busy moment of
 * the machine falls on both alike. Measured back to back in separate runs the two drifted by ±15% between runs here.
 */
async function chainCost(dir: string, inputs: readonly DenialInput[], seconds: number): Promise<ChainCost> {
  const sliceMs = 200;
  const writers = (['plain', 'chained'] as const).map((kind) => {
    const path = join(dir, `chain-cost-${kind}.db`);
    const db = openDatabase({ path, sync: 'normal', walAutocheckpointPages: SERVER_WAL_AUTOCHECKPOINT_PAGES });
    seed(db.$client, inputs);
    return { kind, db, checkpointer: startCheckpointer(path), write: denialWriter(db.$client, kind), writes: 0, ns: 0n, perSlice: [] as number[] };
  });
  const n = inputs.length;
  let next = 0;
  for (const w of writers) for (let i = 0; i < 500; i++) w.write(inputs[next++ % n]!);
  const slices = Math.max(8, Math.round((2 * seconds * 1000) / sliceMs / 4) * 4);
  for (let s = 0; s < slices; s++) {
    // ABBA: plain, chained, chained, plain, ...
    const w = writers[(s % 4 === 0 || s % 4 === 3) ? 0 : 1]!;
    const start = nowNs();
    const end = start + BigInt(sliceMs * 1e6);
    let t = start;
    let count = 0;
    while (t < end) {
      w.write(inputs[next++ % n]!);
      count++;
      t = nowNs();
    }
    w.writes += count;
    w.ns += t - start;
    w.perSlice.push(count / (Number(t - start) / 1e9));
  }
  for (const w of writers) {
    await w.checkpointer.stop();
    w.db.$client.close();
  }
  const [plain, chained] = writers.map((w) => w.writes / (Number(w.ns) / 1e9)) as [number, number];
  const quarter = writers[0]!.perSlice.length / 4;
  const quarterCosts = [0, 1, 2, 3].map((q) => {
    const mean = (xs: number[]) => xs.slice(q * quarter, (q + 1) * quarter).reduce((a, b) => a + b, 0) / quarter;
    return 1 - mean(writers[1]!.perSlice) / mean(writers[0]!.perSlice);
  });
  return { plainPerSec: plain, chainedPerSec: chained, cost: 1 - chained / plain, slices, sliceMs, quarterCosts };
}

async function scenario(
  dir: string,
  sync: SyncMode,
  withReader: boolean,
  seconds: number,
  inputs: readonly DenialInput[],
  agents: readonly string[],
  checkpoint: 'inline' | 'background',
  writer: 'chained' | 'plain' = 'chained',
): Promise<DenialsRow> {
  const path = join(dir, `denials-${sync}${withReader ? '-reader' : ''}-${checkpoint}-${writer}.db`);
  // 'background' is how the server runs: a checkpointer thread, and inline checkpoints only as a safety net.
  const db = openDatabase({ path, sync, walAutocheckpointPages: checkpoint === 'background' ? SERVER_WAL_AUTOCHECKPOINT_PAGES : undefined });
  const checkpointer = checkpoint === 'background' ? startCheckpointer(path) : undefined;
  const sqlite = db.$client;
  const write = denialWriter(sqlite, writer);
  const n = inputs.length;
  seed(sqlite, inputs);
  const pragmas = `${String(sqlite.pragma('journal_mode', { simple: true }))}, synchronous=${String(sqlite.pragma('synchronous', { simple: true }))}`;

  const reader = withReader ? await startReader(path, agents) : undefined;
  // warm-up: statement, page cache, WAL
  for (let i = 0; i < 500; i++) write(inputs[i % n]!);

  if (sqlite.inTransaction) throw new Error('the benchmark must write outside any transaction (autocommit)');
  const latencies = new Samples(1 << 17);
  const readsBefore = reader ? Atomics.load(reader.control, 1) : 0;
  const start = nowNs();
  const endAt = start + BigInt(Math.round(seconds * 1e9));
  let t1 = start;
  let i = 0;
  while (t1 < endAt) {
    const input = inputs[i++ % n]!;
    const t0 = nowNs();
    write(input);
    t1 = nowNs();
    latencies.push(Number(t1 - t0));
  }
  const elapsed = Number(t1 - start) / 1e9;
  const readsAfter = reader ? Atomics.load(reader.control, 1) : 0;
  await reader?.stop();
  await checkpointer?.stop();
  let walMB = 0;
  try {
    walMB = statSync(`${path}-wal`).size / 1e6;
  } catch {
    walMB = 0;
  }
  sqlite.close();
  const [p50, p99, p999] = latencies.percentiles([50, 99, 99.9]);
  return {
    label: `${writer === 'chained' ? 'recorder (hash-chained)' : 'writer before the chain'}, WAL + synchronous=${sync.toUpperCase()}, ${checkpoint} checkpoints${withReader ? ' + 1 reader' : ''}`,
    writer,
    sync,
    reader: withReader,
    writes: i,
    seconds: elapsed,
    writesPerSec: i / elapsed,
    p50Us: (p50 ?? Number.NaN) / 1000,
    p99Us: (p99 ?? Number.NaN) / 1000,
    p999Us: (p999 ?? Number.NaN) / 1000,
    maxUs: latencies.max() / 1000,
    readerQueriesPerSec: reader ? (readsAfter - readsBefore) / elapsed : undefined,
    walMB,
    pragmas,
  };
}

export async function runDenialsBench(options: DenialsBenchOptions = {}): Promise<DenialsBenchResult> {
  const log = options.log ?? (() => undefined);
  const seconds = options.seconds ?? 3;
  const { inputs, agents } = denialInputs(1_024);
  const avgRowBytes =
    inputs.reduce((sum, r) => sum + JSON.stringify(r).length, 0) / Math.max(1, inputs.length);
  const dir = mkdtempSync(join(options.baseDir ?? process.env.BENCH_TMPDIR ?? tmpdir(), 'swarm-bench-denials-'));
  const rows: DenialsRow[] = [];
  let chain: ChainCost;
  let decisionLog: DecisionLogRate;
  try {
    const plan = [
      ['normal', false, 'background'],
      ['normal', false, 'inline'],
      ['normal', true, 'background'],
      ['full', false, 'background'],
      ['full', true, 'background'],
    ] as const;
    for (const [sync, withReader, checkpoint] of plan) {
      const row = await scenario(dir, sync, withReader, seconds, inputs, agents, checkpoint);
      log(`denials: ${row.label}: ${fmtInt(row.writesPerSec)} writes/s`);
      rows.push(row);
    }
    chain = await chainCost(dir, inputs, 2 * seconds);
    decisionLog = await decisionLogRate(dir, seconds);
    log(`denials: decision_log_all: ${fmtInt(decisionLog.allowedPerSec)} allowed decisions/s recorded against ${fmtInt(decisionLog.deniedPerSec)} denials/s`);
    log(`denials: chain cost ${(100 * chain.cost).toFixed(1)}% (${fmtInt(chain.chainedPerSec)} against ${fmtInt(chain.plainPerSec)} writes/s)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { dir, seconds, seedRows: SEED_ROWS, avgRowBytes, rows, chainCost: chain, decisionLog };
}

export function formatDenialsResult(r: DenialsBenchResult): string {
  const table = markdownTable(
    ['scenario', 'writes', 'writes/s', 'p50 µs', 'p99 µs', 'p99.9 µs', 'max µs', 'reader queries/s', 'WAL at end', 'pragmas'],
    r.rows.map((row) => [
      row.label,
      fmtInt(row.writes),
      fmtInt(row.writesPerSec),
      fmt(row.p50Us),
      fmt(row.p99Us),
      fmt(row.p999Us),
      fmtInt(row.maxUs),
      row.readerQueriesPerSec === undefined ? '–' : fmtInt(row.readerQueriesPerSec),
      `${row.walMB.toFixed(1)} MB`,
      row.pragmas,
    ]),
  );
  const c = r.chainCost;
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  return [
    `Hash chain: ${fmtInt(c.chainedPerSec)} durable denials/s by the recorder (decision id, revision, chain) against ${fmtInt(c.plainPerSec)}/s by the ` +
      `writer before the evidence trail (one INSERT of the spec's columns), both open at once and alternating in ${c.slices} slices of ` +
      `${c.sliceMs} ms (ABBA), WAL + NORMAL, background checkpoints: ${pct(c.cost)} slower (by quarter of the run: ${c.quarterCosts.map(pct).join(', ')}).`,
    '',
    `decision_log_all: ${fmtInt(r.decisionLog.allowedPerSec)} allowed decisions/s recorded as security events (masked arguments, trace, chain) against ` +
      `${fmtInt(r.decisionLog.deniedPerSec)} denials/s by the same recorder, interleaved in ${r.decisionLog.slices} slices: ${(100 * r.decisionLog.ratio).toFixed(0)}% of the denial rate.`,
    '',
    `Denials: the recorder's appendDenial() on a SQLite file in ${r.dir} (since removed), one transaction per row, ` +
      `${r.seconds} s per scenario, ${fmtInt(r.seedRows)} rows seeded first; rows are real DENY decisions ` +
      `(~${Math.round(r.avgRowBytes)} bytes of data each, trace included). Latency = one write.`,
    '',
    table,
  ].join('\n');
}

/**
 * `--chain-only [seconds]`: only the chain's cost (chainCost(), the measurement behind `npm run bench`'s verdict), for a
 * quick look while working on the recorder; `seconds` as runDenialsBench's (default 3, so 6 s of slices).
 */
async function runChainOnly(seconds: number): Promise<void> {
  const { inputs } = denialInputs(1_024);
  const dir = mkdtempSync(join(process.env.BENCH_TMPDIR ?? tmpdir(), 'swarm-bench-chain-'));
  try {
    const c = await chainCost(dir, inputs, 2 * seconds);
    const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
    console.log(
      `chain cost ${pct(c.cost)} (${fmtInt(c.chainedPerSec)} against ${fmtInt(c.plainPerSec)} writes/s; by quarter: ${c.quarterCosts.map(pct).join(', ')})`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url) && process.argv.includes('--chain-only')) {
  const arg = Number(process.argv[process.argv.indexOf('--chain-only') + 1]);
  runChainOnly(Number.isFinite(arg) && arg > 0 ? arg : 3).catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
} else if (isMain(import.meta.url)) {
  runDenialsBench({ log: (l) => console.error(l) })
    .then((r) => console.log(formatDenialsResult(r)))
    .catch((e: unknown) => {
      console.error(e);
      process.exitCode = 1;
    });
}
