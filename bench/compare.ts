/**
 * The same workload in three engines, in one run: this engine in process (`check()`, trace included), Cedar
 * (`@cedar-policy/cedar-wasm`, Node.js build, preparsed policy set, `statefulIsAuthorized`) and Casbin (`casbin`,
 * priority model, `enforceExSync`).
 *
 *   node --import tsx bench/compare.ts
 *
 * World, policy and workload are those of bench/engine.ts (200 agents x 10 tools of 200, 20 flag-guarded tools,
 * 10 gated tools, 1,000 generated YAML rules, the seeded ~100k-call workload). Every engine is fed from the same
 * compiled YAML and the same world: the translations below are mechanical, not hand-written per rule.
 *
 * Every engine configuration runs in its own worker thread (compare-worker.ts: its own JIT, the only code running
 * while it is timed). First, each decides the same 2,000 sampled calls and must give the decision of this engine on
 * every one (ALLOW, DENY or ASK); one mismatch and the run fails. Calls timed later are checked as well. Then, in
 * rounds where the engines take turns: every call of the stream timed on its own (p50, p99, per decision) and a
 * throughput run (decisions/s). Requests for Cedar and Casbin are translated before the timed loops (in their favour).
 *
 * How the resolution (priority first, then ALLOW > DENY > ASK within a tier) is expressed in each engine, and what
 * ASK becomes, is described in bench/README.md ("compare.ts"). The parts: compare/translate.ts (one neutral
 * description of the rules), compare/cedar.ts and compare/casbin.ts (the translations and their runners),
 * compare/meter.ts (the timing harness); this file runs them in workers and reports.
 */
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { isMainThread, Worker } from 'node:worker_threads';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { parsePolicy, type CompiledPolicy } from '@/lib/permissions/policy';
import type { Decision, ToolContext } from '@/lib/permissions/types';
import { buildEngine, buildWorld, generatePolicy, generateWorkload, type BenchWorld } from './engine';
import { casbinRunner } from './compare/casbin';
import { cedarRunner, type CedarModel, type CedarSetup } from './compare/cedar';
import { keep, Meter, type Limits, type Timing } from './compare/meter';
import { describe } from './compare/translate';
import { fmt, fmtInt, isMain, markdownTable, prng, sample } from './util';

export { Meter } from './compare/meter';

// Node 20's V8 (11.3) inlines JS-to-Wasm calls into optimized code, and a lazy deoptimization while Cedar's wasm is
// on the stack (its JSON callbacks can invalidate optimized code) now and then crashes the process ("Fatal error:
// unreachable code" in Deoptimizer::DoComputeBuiltinContinuation, under statefulIsAuthorized). Not inlining those
// calls avoids it; it costs Cedar nanoseconds on calls of 100 µs and more. V8 flags are per process: set before any
// engine code is optimized (this module is imported before anything runs, in the main thread and in every worker).
setFlagsFromString('--no-turbo-inline-js-wasm-calls');

// ---------------------------------------------------------------------------------------------------------------

export interface EngineRow {
  /** ours, or the family of the other engine (one ratio row per configuration) */
  family: 'ours' | 'cedar' | 'casbin';
  engine: string;
  /** what the engine holds: policies, and per set / enforcer when sliced */
  policy: string;
  setupMs: number;
  timing: Timing;
}

export interface Agreement {
  engine: string;
  sampled: number;
  mismatches: number;
  examples: string[];
}

export interface CompareResult {
  rules: number;
  calls: number;
  sampleSize: number;
  sampleMix: Record<Decision, number>;
  agreement: Agreement[];
  rows: EngineRow[];
  versions: { cedar: string; casbin: string };
  cedarCounts: CedarModel['counts'];
  rounds: number;
}

export interface CompareOptions {
  log?: (line: string) => void;
  sample?: number;
  /** timing rounds (the engines take turns in each) */
  rounds?: number;
  /** only these configurations (this engine is always measured) */
  only?: readonly ContenderKey[];
}

const SAMPLE_SEED = 424242;

export const CONTENDERS = ['ours', 'cedar-permits', 'cedar-set', 'cedar-sliced', 'casbin', 'casbin-sliced'] as const;
export type ContenderKey = (typeof CONTENDERS)[number];

export interface ContenderInfo {
  key: ContenderKey;
  family: EngineRow['family'];
  engine: string;
  policy: string;
  setupMs: number;
  cedarCounts?: CedarModel['counts'];
}

export interface Contender extends ContenderInfo {
  decide(i: number): Decision;
}

/** The world, policy and workload of engine.ts, and this engine's decision for every call (the reference). */
export interface Workload {
  world: BenchWorld;
  policy: CompiledPolicy;
  contexts: ToolContext[];
  ours: ReturnType<typeof buildEngine>;
  expected: Decision[];
}

export function benchWorkload(): Workload {
  const world = buildWorld();
  const gen = generatePolicy(world, 1_000);
  const policy = parsePolicy(gen.text, 'bench-policy.yaml');
  const contexts = generateWorkload(world, gen.hints, 100_000);
  const ours = buildEngine(world, policy);
  const expected: Decision[] = contexts.map((c) => ours.engine.check(c).decision);
  return { world, policy, contexts, ours, expected };
}

const CEDAR_SETUPS: Partial<Record<ContenderKey, [string, CedarSetup]>> = {
  'cedar-permits': ['per-agent permits, one set', { allowlist: 'permits', sliced: false, setId: 'swarm-permits' }],
  'cedar-set': ['Agent.tools attribute, one set', { allowlist: 'entity-set', sliced: false, setId: 'swarm-entity-set' }],
  'cedar-sliced': ['per-agent permits, sliced per tool', { allowlist: 'permits', sliced: true, setId: 'swarm-sliced' }],
};

export async function setUpContender(key: ContenderKey, w: Workload): Promise<Contender> {
  const s0 = performance.now();
  if (key === 'ours') {
    const { contexts, ours } = w;
    return {
      key,
      family: 'ours',
      engine: 'this engine: check() with trace',
      policy: `5 sources, ${fmtInt(w.policy.rules.length)} YAML rules, indexed`,
      setupMs: 0,
      decide: (i) => {
        const r = ours.engine.check(contexts[i]!);
        keep(r.trace.length);
        return r.decision;
      },
    };
  }
  const t = describe(w.world, w.policy);
  const cedarSetup = CEDAR_SETUPS[key];
  if (cedarSetup) {
    const [label, setup] = cedarSetup;
    const r = cedarRunner(t, w.world.tools, w.contexts, setup);
    const policy = setup.sliced
      ? `${fmtInt(r.policyCount)} policies in ${r.sets} preparsed sets, ${fmt(r.policiesPerSet)} per set`
      : `${fmtInt(r.policyCount)} policies, one preparsed set`;
    return {
      key,
      family: 'cedar',
      engine: `Cedar ${cedar.getCedarVersion()} (wasm): ${label}`,
      policy,
      setupMs: performance.now() - s0,
      cedarCounts: r.model.counts,
      decide: r.decide,
    };
  }
  const sliced = key === 'casbin-sliced';
  const r = await casbinRunner(t, w.world.tools, w.contexts, sliced);
  const policy = sliced
    ? `${fmtInt(r.rows)} rows + ${fmtInt(r.groupings)} g links in ${r.enforcers} enforcers, ${fmt(r.rowsPerEnforcer)} rows each`
    : `${fmtInt(r.rows)} rows + ${fmtInt(r.groupings)} g links, one enforcer`;
  return {
    key,
    family: 'casbin',
    engine: `Casbin ${casbinVersion()}: ${sliced ? 'priority model, sliced per tool' : 'priority model, one enforcer'}`,
    policy,
    setupMs: performance.now() - s0,
    decide: r.decide,
  };
}

export function limitsFor(family: EngineRow['family']): Limits {
  // ours: the whole workload timed call by call in every round; theirs: as many calls as fit in the time
  return family === 'ours'
    ? { singleCallsPerRound: 100_000, singleMs: 1_000, throughputMs: 600, warmUpMs: 1_000 }
    : { singleCallsPerRound: 10_000, singleMs: 800, throughputMs: 500, warmUpMs: 300 };
}

/** Messages between runCompareBench and a worker (compare-worker.ts). */
export type WorkerRequest = { type: 'agree'; indexes: number[] } | { type: 'warmup' } | { type: 'round' } | { type: 'result' };
export type WorkerReply =
  | { type: 'ready'; info: ContenderInfo }
  | { type: 'agreed'; decisions: Decision[] }
  | { type: 'done' }
  | { type: 'result'; timing: Timing }
  | { type: 'error'; message: string };

const WORKER_BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
import(workerData.loader).then((tsx) => tsx.tsImport(workerData.entry, workerData.entry));
`;

/** One engine configuration in its own worker thread: its own JIT, and the only code running while it is timed. */
class EngineWorker {
  private readonly worker: Worker;
  private pending: { resolve(r: WorkerReply): void; reject(e: Error): void } | undefined;
  private failure: Error | undefined;
  readonly ready: Promise<ContenderInfo>;

  constructor(key: ContenderKey) {
    // Node 20 does not carry `--import tsx` into worker threads: the worker loads tsx's API, then the TypeScript entry.
    this.worker = new Worker(WORKER_BOOTSTRAP, {
      eval: true,
      workerData: { key, entry: new URL('./compare-worker.ts', import.meta.url).href, loader: import.meta.resolve('tsx/esm/api') },
    });
    this.ready = new Promise((resolve, reject) => {
      this.pending = {
        resolve: (r) => (r.type === 'ready' ? resolve(r.info) : reject(new Error(`worker ${key}: unexpected ${r.type}`))),
        reject,
      };
    });
    this.worker.on('message', (m: WorkerReply) => {
      const p = this.pending;
      this.pending = undefined;
      if (m.type === 'error') p?.reject(new Error(m.message));
      else p?.resolve(m);
    });
    const fail = (e: Error) => {
      this.failure = e;
      this.pending?.reject(e);
      this.pending = undefined;
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the worker of ${key} exited (${code})`)));
  }

  call(m: WorkerRequest): Promise<WorkerReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage(m);
    });
  }

  async done(m: WorkerRequest): Promise<void> {
    const r = await this.call(m);
    if (r.type !== 'done') throw new Error(`unexpected reply ${r.type}`);
  }

  async terminate(): Promise<void> {
    this.failure ??= new Error('terminated');
    await this.worker.terminate();
  }
}

export async function runCompareBench(options: CompareOptions = {}): Promise<CompareResult> {
  const log = options.log ?? (() => undefined);
  const sampleSize = options.sample ?? 2_000;
  const rounds = options.rounds ?? 3;
  const w = benchWorkload();
  const { contexts, expected, ours } = w;
  const keys = CONTENDERS.filter((k) => k === 'ours' || !options.only || options.only.includes(k));
  const workers = keys.map((key) => new EngineWorker(key));
  try {
    // Set up in parallel (each worker builds the same world, policy and workload, then its engine).
    const infos = await Promise.all(workers.map((x) => x.ready));
    for (const info of infos) if (info.family !== 'ours') log(`compare: ${info.engine}: ${info.policy}, ready in ${info.setupMs.toFixed(0)} ms`);
    const cc = infos.find((i) => i.cedarCounts)?.cedarCounts;
    if (cc) log(`compare: Cedar policies: ${cc.permits} permits, ${cc.forbids} forbids, ${cc.asks} @ask forbids, ${cc.http} HTTP; ${cc.exceptionTerms} exception terms`);

    // 1. Agreement on sampled calls, before any timing.
    const rng = prng(SAMPLE_SEED);
    const indexes = sample(rng, Array.from({ length: contexts.length }, (_, i) => i), sampleSize);
    const sampleMix: Record<Decision, number> = { ALLOW: 0, DENY: 0, ASK: 0 };
    for (const i of indexes) sampleMix[expected[i]!]++;
    const answers = await Promise.all(workers.map((x) => x.call({ type: 'agree', indexes })));
    const agreement: Agreement[] = [];
    answers.forEach((a, k) => {
      const info = infos[k]!;
      if (info.family === 'ours') return;
      if (a.type !== 'agreed') throw new Error(`${info.engine}: unexpected reply ${a.type}`);
      let mismatches = 0;
      const examples: string[] = [];
      indexes.forEach((i, j) => {
        const got = a.decisions[j];
        const want = expected[i]!;
        if (got === want) return;
        mismatches++;
        if (examples.length < 10) {
          const x = contexts[i]!;
          const r = ours.engine.check(x);
          examples.push(`#${i} ${x.principal.agent ?? x.principal.id} as ${x.agent} -> ${x.tool} ${JSON.stringify(x.arguments)}: ours ${want} (${r.ruleSource}), ${info.engine} ${got}`);
        }
      });
      agreement.push({ engine: info.engine, sampled: indexes.length, mismatches, examples });
      log(`compare: agreement, ${info.engine}: ${indexes.length - mismatches}/${indexes.length}`);
    });
    const failed = agreement.filter((a) => a.mismatches > 0);
    if (failed.length > 0) {
      throw new Error(
        `The engines disagree; no timing is reported.\n${failed.map((a) => `${a.engine}: ${a.mismatches} of ${a.sampled} sampled calls\n  ${a.examples.join('\n  ')}`).join('\n')}`,
      );
    }

    // 2. Timing: one worker at a time, in rounds in which the engines take turns (the order reversed every other
    // round), so that a change of the machine's load hits them alike.
    for (const x of workers) await x.done({ type: 'warmup' });
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? workers : [...workers].reverse();
      for (const x of order) await x.done({ type: 'round' });
      log(`compare: timing round ${r + 1}/${rounds} done`);
    }
    const rows: EngineRow[] = [];
    for (const [k, x] of workers.entries()) {
      const reply = await x.call({ type: 'result' });
      const info = infos[k]!;
      if (reply.type !== 'result') throw new Error(`${info.engine}: unexpected reply ${reply.type}`);
      const timing = reply.timing;
      if (timing.mismatches > 0) throw new Error(`${info.engine}: ${timing.mismatches} timed calls disagreed with this engine`);
      log(
        `compare: ${info.engine}: ${fmtInt(timing.decisionsPerSec)} decisions/s (rounds: ${timing.roundRates.map(fmtInt).join(', ')}), ` +
          `p50 ${fmt(timing.p50Us)} µs, p99 ${fmt(timing.p99Us)} µs`,
      );
      rows.push({ family: info.family, engine: info.engine, policy: info.policy, setupMs: info.setupMs, timing });
    }
    return {
      rules: w.policy.rules.length,
      calls: contexts.length,
      sampleSize: indexes.length,
      sampleMix,
      agreement,
      rows,
      versions: { cedar: cedar.getCedarVersion(), casbin: casbinVersion() },
      cedarCounts: cc ?? { permits: 0, forbids: 0, asks: 0, http: 0, exceptionTerms: 0 },
      rounds,
    };
  } finally {
    await Promise.all(workers.map((x) => x.terminate()));
  }
}

/** The installed version, read from its package.json (the package does not export it). */
function casbinVersion(): string {
  try {
    const url = new URL('../node_modules/casbin/package.json', import.meta.url);
    return (JSON.parse(readFileSync(url, 'utf8')) as { version?: string }).version ?? '?';
  } catch {
    return '?';
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------------------------

export const RATIO_TARGET = 100;

export interface Ratio {
  versus: string;
  throughput: number;
  p50: number;
  p99: number;
}

export function ratios(r: CompareResult): Ratio[] {
  const ours = r.rows.find((x) => x.family === 'ours');
  if (!ours) return [];
  return r.rows
    .filter((x) => x.family !== 'ours')
    .map((x) => ({
      versus: x.engine,
      throughput: ours.timing.decisionsPerSec / x.timing.decisionsPerSec,
      p50: x.timing.p50Us / ours.timing.p50Us,
      p99: x.timing.p99Us / ours.timing.p99Us,
    }));
}

const times = (v: number): string => (Number.isFinite(v) ? `${v >= 100 ? fmtInt(v) : v.toFixed(1)}x` : '–');

export function formatCompareResult(r: CompareResult): string {
  const mixTotal = r.sampleMix.ALLOW + r.sampleMix.DENY + r.sampleMix.ASK;
  const agreement = markdownTable(
    ['engine', 'sampled calls', 'ALLOW / DENY / ASK (this engine)', 'same decision', 'mismatches'],
    r.agreement.map((a) => [
      a.engine,
      fmtInt(a.sampled),
      `${r.sampleMix.ALLOW} / ${r.sampleMix.DENY} / ${r.sampleMix.ASK}`,
      `${fmtInt(a.sampled - a.mismatches)} / ${fmtInt(a.sampled)}`,
      String(a.mismatches),
    ]),
  );
  const pair = (d: { p50Us: number; p99Us: number }) => `${fmt(d.p50Us)} / ${fmt(d.p99Us)}`;
  const engines = markdownTable(
    ['engine', 'policy', 'timed calls', 'decisions/s', 'p50 µs', 'p99 µs', 'p99.9 µs', 'ALLOW p50/p99', 'DENY p50/p99', 'ASK p50/p99'],
    r.rows.map((x) => [
      x.engine,
      x.policy,
      fmtInt(x.timing.singleCalls),
      fmtInt(x.timing.decisionsPerSec),
      fmt(x.timing.p50Us),
      fmt(x.timing.p99Us),
      fmt(x.timing.p999Us),
      pair(x.timing.byDecision.ALLOW),
      pair(x.timing.byDecision.DENY),
      pair(x.timing.byDecision.ASK),
    ]),
  );
  const ratioTable = markdownTable(
    ['this engine vs', 'decisions/s ratio', 'p50 ratio', 'p99 ratio', 'target', ''],
    ratios(r).map((x) => [
      x.versus,
      times(x.throughput),
      times(x.p50),
      times(x.p99),
      `≥ ${RATIO_TARGET}x`,
      Math.min(x.throughput, x.p50) >= RATIO_TARGET ? 'met' : 'MISSED',
    ]),
  );
  return [
    `Engines compared on the workload of \`engine.ts\` (${fmtInt(r.rules)} YAML rules, ${fmtInt(r.calls)} calls); Cedar ${r.versions.cedar}, ` +
      `Casbin ${r.versions.casbin}. Agreement first: ${fmtInt(r.sampleSize)} calls sampled from the workload (seeded), ` +
      `ALLOW ${((100 * r.sampleMix.ALLOW) / mixTotal).toFixed(1)}%, DENY ${((100 * r.sampleMix.DENY) / mixTotal).toFixed(1)}%, ` +
      `ASK ${((100 * r.sampleMix.ASK) / mixTotal).toFixed(1)}%; every timed call was checked as well.`,
    '',
    agreement,
    '',
    `Timing in ${r.rounds} rounds in which the engines take turns (the order reversed every other round). Each call of ` +
      'the stream timed on its own (hrtime overhead subtracted; p50/p99 per decision are over the calls with that ' +
      'decision); decisions/s: an untimed run of the same stream in each round, the median of the rounds. Cedar and ' +
      'Casbin get their requests pre-translated. Ratios: decisions/s ours ÷ theirs, latencies theirs ÷ ours.',
    '',
    engines,
    '',
    ratioTable,
  ].join('\n');
}

if (isMainThread && isMain(import.meta.url)) {
  // --only=cedar-sliced,casbin: a subset of the configurations; --rounds=N
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const only = arg('only')?.split(',') as ContenderKey[] | undefined;
  const rounds = arg('rounds') ? Number(arg('rounds')) : undefined;
  runCompareBench({ log: (l) => console.error(l), only, rounds })
    .then((r) => console.log(formatCompareResult(r)))
    .catch((e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exitCode = 1;
    });
}
