/**
 * Permission engine benchmark: the cost of one decision (check(), trace included) with the five default sources
 * wired like lib/server/app.ts, but fed from in-memory data instead of config files and the database.
 *
 *   node --import tsx bench/engine.ts
 *
 * World: 200 agents x 10 allowlisted tools out of 200 tools; 20 tools guarded by feature flags (4 flags off);
 * 10 tools behind a human-approval gate; 1,000 operator YAML rules generated as text and compiled with parsePolicy.
 * Workload: ~100k deterministic tool calls (seeded PRNG), mostly allowed, with unlisted tools, unknown agents, flagged
 * tools, gated tools and calls aimed at policy rules. Then the same at 10,000 and 100,000 rules.
 */
import { PermissionEngine } from '@/lib/permissions/engine';
import { mergeGates, type GateSpec } from '@/lib/permissions/gates';
import { candidateRules, parsePolicy, type CompiledPolicy } from '@/lib/permissions/policy';
import {
  createAgentAllowlistSource,
  createFlagSource,
  createHitlSource,
  createPolicySource,
  createRbacSource,
  type AgentDirectory,
  type FlagGuard,
} from '@/lib/permissions/sources';
import { DECISIONS, type ApprovalState, type Decision, type Principal, type ToolContext } from '@/lib/permissions/types';
import { buildBareLoop, type BareResult } from './bare-loop';
import { fmt, fmtInt, isMain, markdownTable, nowNs, pick, prng, randInt, sample, Samples, type Rng } from './util';

// ---------------------------------------------------------------------------------------------------------------
// The world: tools, agents, allowlists, flags, gates
// ---------------------------------------------------------------------------------------------------------------

const SEED = 20240611;
const VERBS = ['read', 'list', 'profile', 'query', 'write', 'export', 'import', 'train', 'score', 'deploy'] as const;
const NOUNS = [
  'dataset', 'table', 'model', 'report', 'feature', 'schema', 'metric', 'job', 'pipeline', 'notebook',
  'bucket', 'ticket', 'invoice', 'customer', 'ledger', 'alert', 'dashboard', 'index', 'embedding', 'prompt',
] as const;
const TEAMS = ['etl', 'ml', 'ops', 'fin', 'support'] as const;
const ENVS = ['dev', 'staging', 'prod'] as const;
const ENV_WEIGHTS = [0.45, 0.4, 0.15] as const;
const LIMITS = [100, 500, 1000, 5000] as const;
const DATASETS = ['ds_sales', 'ds_clicks', 'ds_events', 'ds_models'] as const;
const PII_DATASETS = ['pii_customers', 'pii_accounts'] as const;

function weighted<T>(rng: Rng, items: readonly T[], weights: readonly number[]): T {
  let x = rng();
  for (let i = 0; i < items.length; i++) {
    x -= weights[i] ?? 0;
    if (x < 0) return items[i] as T;
  }
  return items[items.length - 1] as T;
}
const SENSITIVE_VERBS = ['write', 'export', 'import', 'train', 'deploy'] as const;
const GATE_TYPES = ['deploy', 'export', 'payment', 'delete'] as const;

export interface BenchWorld {
  readonly tools: readonly string[];
  readonly agents: readonly string[];
  readonly allowlists: ReadonlyMap<string, ReadonlySet<string>>;
  readonly guards: readonly FlagGuard[];
  readonly flaggedTools: ReadonlySet<string>;
  readonly flagValues: ReadonlyMap<string, boolean>;
  readonly gates: ReadonlyMap<string, string>;
}

export function buildWorld(seed = SEED): BenchWorld {
  const rng = prng(seed);
  const tools = VERBS.flatMap((v) => NOUNS.map((n) => `${v}_${n}`));
  const agents = Array.from({ length: 200 }, (_, i) => `${TEAMS[i % TEAMS.length]}_agent_${i}`);
  const allowlists = new Map<string, ReadonlySet<string>>(agents.map((a) => [a, new Set(sample(rng, tools, 10))]));
  const special = sample(rng, tools, 30);
  const flagged = special.slice(0, 20);
  const gatedTools = special.slice(20, 30);
  const guards: FlagGuard[] = flagged.map((tool, i) => ({
    flag: `flag_${String(i).padStart(2, '0')}`,
    // flag_19 is absent from the values below and falls back to its declared default (off)
    defaultValue: i !== 19,
    tools: [tool],
    paths: [],
  }));
  const flagValues = new Map<string, boolean>();
  for (let i = 0; i < 19; i++) flagValues.set(`flag_${String(i).padStart(2, '0')}`, ![3, 7, 11].includes(i));
  const gates = new Map(gatedTools.map((t, i) => [t, GATE_TYPES[i % GATE_TYPES.length] as string]));
  return { tools, agents, allowlists, guards, flaggedTools: new Set(flagged), flagValues, gates };
}

// ---------------------------------------------------------------------------------------------------------------
// The operator policy: N rules generated as YAML text
// ---------------------------------------------------------------------------------------------------------------

/** How to build a call that a generated tool rule matches (used to aim part of the workload at the policy). */
export interface RuleHint {
  agent?: string;
  tool: string;
  args: Readonly<Record<string, unknown>>;
}

type ArgSpec = { match: Record<string, unknown>; call: Record<string, unknown> };
const ARG_SPECS: readonly ArgSpec[] = [
  { match: { env: 'prod' }, call: { env: 'prod' } },
  { match: { dataset: 'pii_*' }, call: { dataset: 'pii_customers' } },
  { match: { limit: [10000, 100000] }, call: { limit: 100000 } },
  { match: { contains_pii: true }, call: { contains_pii: true } },
  { match: { env: ['prod', 'staging'], contains_pii: true }, call: { env: 'staging', contains_pii: true } },
];

/**
 * The i-th rule depends only on (seed, i), so the 1,000-rule policy is a prefix of the 10,000- and 100,000-rule ones
 * and the same workload hits the same rules at every size. With `foreignFrom`, the extra rules are about other
 * agents and tools (same mix, prefixed names), so a call matches the same rules at every size: only the index is tested.
 *
 * Mix: 50% exact agent+tool (70% ALLOW), 12% exact tool (ALLOW, or DENY for a role), 23% exact sensitive tool +
 * arguments (DENY), 3% exact agent + tool glob (DENY), 2% tool or agent globs only (checked on every call), 2% ASK on
 * gated tools with arguments, 8% HTTP rules.
 * A fifth of the DENY rules at priority 950, the rest at the default 500.
 */
export interface PolicyShape {
  seed?: number;
  /**
   * Rules from this index on name agents and tools of other teams (`o<k>_` prefixed names the workload never calls):
   * a larger organisation rather than a denser one. Undefined: every rule is about the benchmark's own agents and tools.
   */
  foreignFrom?: number;
  /**
   * Every n-th rule carries a `when:` CEL condition that holds for every call of the workload, so the decisions are the
   * same as without it and only the cost of evaluating conditions is added.
   */
  conditionEvery?: number;
}

const prefixNames = (v: unknown, prefix: string): unknown =>
  typeof v === 'string' ? `${prefix}${v}` : Array.isArray(v) ? v.map((x) => prefixNames(x, prefix)) : v;

export function generatePolicy(world: BenchWorld, count: number, shape: PolicyShape = {}): { text: string; hints: RuleHint[] } {
  const seed = shape.seed ?? SEED;
  const lines: string[] = ['version: 1', 'rules:'];
  const hints: RuleHint[] = [];
  const gated = [...world.gates.keys()];
  const globVerbs = ['export', 'import', 'deploy', 'write'] as const;
  for (let i = 0; i < count; i++) {
    const rng = prng((seed ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0);
    const id = `r${String(i).padStart(6, '0')}`;
    const agent = pick(rng, world.agents);
    const kind = rng();
    let decision: Decision;
    let match: Record<string, unknown>;
    let hint: RuleHint | undefined;
    if (kind < 0.5) {
      // explicit grants and exceptions for one agent and one tool
      const tool = pick(rng, [...(world.allowlists.get(agent) ?? [])]);
      decision = rng() < 0.7 ? 'ALLOW' : 'DENY';
      match = { agent, tool };
      hint = { agent, tool, args: {} };
    } else if (kind < 0.62) {
      const tool = pick(rng, world.tools);
      decision = rng() < 0.7 ? 'ALLOW' : 'DENY';
      match = decision === 'DENY' ? { tool, role: ['anonymous', 'auditor'] } : { tool };
      hint = { tool, args: {} };
    } else if (kind < 0.85) {
      // conditional restrictions on sensitive tools: certain arguments are refused
      const tool = `${pick(rng, SENSITIVE_VERBS)}_${pick(rng, NOUNS)}`;
      const spec = pick(rng, ARG_SPECS);
      decision = 'DENY';
      match = { tool, arguments: spec.match };
      hint = { tool, args: spec.call };
    } else if (kind < 0.88) {
      const verb = pick(rng, ['export', 'deploy'] as const);
      decision = 'DENY';
      match = { agent, tool: `${verb}_*` };
      hint = { agent, tool: `${verb}_${pick(rng, NOUNS)}`, args: {} };
    } else if (kind < 0.9) {
      const verb = pick(rng, globVerbs);
      const spec = pick(rng, ARG_SPECS);
      if (rng() < 0.5) {
        match = { tool: `${verb}_*`, arguments: spec.match };
        hint = { tool: `${verb}_${pick(rng, NOUNS)}`, args: spec.call };
      } else {
        const team = pick(rng, TEAMS);
        match = { agent: `${team}_*`, tool: [`${verb}_*`, 'deploy_model'], arguments: spec.match };
        hint = { agent: `${team}_agent_${TEAMS.indexOf(team)}`, tool: `${verb}_${pick(rng, NOUNS)}`, args: spec.call };
      }
      decision = 'DENY';
    } else if (kind < 0.92) {
      const tool = pick(rng, gated);
      const spec = pick(rng, ARG_SPECS);
      match = { tool, arguments: spec.match };
      hint = { tool, args: spec.call };
      decision = 'ASK';
    } else {
      decision = 'DENY';
      match = {
        method: pick(rng, [['POST'], ['PUT', 'DELETE'], ['DELETE']]),
        path: `/api/v1/${pick(rng, NOUNS)}s/**`,
        role: ['viewer', 'auditor'],
      };
    }
    if (shape.foreignFrom !== undefined && i >= shape.foreignFrom) {
      const prefix = `o${Math.floor(i / 1_000)}_`;
      if ('agent' in match) match.agent = prefixNames(match.agent, prefix);
      if ('tool' in match) match.tool = prefixNames(match.tool, prefix);
      hint = undefined;
    }
    lines.push(`  - id: ${id}`, `    decision: ${decision}`);
    // hard restrictions sit above the allowlist's deny (900): a fifth of the DENY rules
    if (decision === 'DENY' && rng() < 0.2) lines.push('    priority: 950');
    lines.push(`    reason: ${JSON.stringify(`Generated rule ${id} (${decision}).`)}`, `    match: ${JSON.stringify(match)}`);
    if (shape.conditionEvery && i % shape.conditionEvery === 0) lines.push(`    when: "size(principal.id) >= 0 && tool != 'no_such_tool'"`);
    if (hint) hints.push(hint);
  }
  return { text: `${lines.join('\n')}\n`, hints };
}

// ---------------------------------------------------------------------------------------------------------------
// The workload
// ---------------------------------------------------------------------------------------------------------------

export type CallKind = 'allowed' | 'unlisted' | 'unknown_agent' | 'wrong_identity' | 'flagged' | 'gated' | 'policy';
const KIND_WEIGHTS: readonly [CallKind, number][] = [
  ['allowed', 0.62],
  ['unlisted', 0.1],
  ['flagged', 0.06],
  ['gated', 0.07],
  ['policy', 0.12],
  ['unknown_agent', 0.015],
  ['wrong_identity', 0.015],
];

export function generateWorkload(world: BenchWorld, hints: readonly RuleHint[], count: number, seed = SEED + 1): ToolContext[] {
  const rng = prng(seed);
  const principals = new Map<string, Principal>();
  const principal = (agent: string): Principal => {
    let p = principals.get(agent);
    if (!p) principals.set(agent, (p = { kind: 'agent', id: agent, role: 'viewer', agent }));
    return p;
  };
  const plain = new Map<string, string[]>();
  const flaggedPairs: [string, string][] = [];
  const gatedPairs: [string, string][] = [];
  for (const [agent, tools] of world.allowlists) {
    const list: string[] = [];
    for (const t of tools) {
      if (world.gates.has(t)) gatedPairs.push([agent, t]);
      else if (world.flaggedTools.has(t)) flaggedPairs.push([agent, t]);
      else list.push(t);
    }
    plain.set(agent, list);
  }
  const baseArgs = (r: Rng, i: number): Record<string, unknown> => ({
    dataset: r() < 0.08 ? pick(r, PII_DATASETS) : pick(r, DATASETS),
    env: weighted(r, ENVS, ENV_WEIGHTS),
    limit: r() < 0.05 ? 100000 : pick(r, LIMITS),
    contains_pii: r() < 0.03,
    request_id: `req-${i}`,
  });
  const plainTool = (r: Rng, agent: string): string => {
    const list = plain.get(agent);
    return list && list.length > 0 ? pick(r, list) : pick(r, world.tools);
  };
  const out: ToolContext[] = [];
  for (let i = 0; i < count; i++) {
    let x = rng();
    let kind: CallKind = 'allowed';
    for (const [k, w] of KIND_WEIGHTS) {
      if (x < w) {
        kind = k;
        break;
      }
      x -= w;
    }
    let agent = pick(rng, world.agents);
    let tool: string;
    let args = baseArgs(rng, i);
    let who = principal(agent);
    switch (kind) {
      case 'allowed':
        tool = plainTool(rng, agent);
        break;
      case 'unlisted': {
        const allowed = world.allowlists.get(agent);
        do tool = pick(rng, world.tools);
        while (allowed?.has(tool));
        break;
      }
      case 'unknown_agent':
        agent = `rogue_agent_${randInt(rng, 50)}`;
        who = principal(agent);
        tool = pick(rng, world.tools);
        break;
      case 'wrong_identity':
        tool = plainTool(rng, agent);
        who = principal(pick(rng, world.agents));
        break;
      case 'flagged':
        [agent, tool] = pick(rng, flaggedPairs);
        who = principal(agent);
        break;
      case 'gated':
        [agent, tool] = pick(rng, gatedPairs);
        who = principal(agent);
        break;
      case 'policy': {
        const h = pick(rng, hints);
        if (h.agent) agent = h.agent;
        who = principal(agent);
        tool = h.tool;
        args = { ...args, ...h.args };
        break;
      }
    }
    out.push({ kind: 'tool', principal: who, agent, tool, arguments: args, toolCallId: `call-${i}` });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// The engine, wired like lib/server/app.ts
// ---------------------------------------------------------------------------------------------------------------

const NO_APPROVAL_YET: ApprovalState = Object.freeze({ status: 'none' as const });

export interface BenchEngine {
  engine: PermissionEngine;
  /** the app's mayAsk(): true when the engine asks the approval hook (a database lookup in the application) */
  needsApprovalLookup(tool: string): boolean;
}

export function buildEngine(world: BenchWorld, policy: CompiledPolicy): BenchEngine {
  const directory: AgentDirectory = {
    agents: new Map([...world.allowlists].map(([name, tools]) => [name, { tools }] as const)),
  };
  const gates = world.gates;
  const flagValues = world.flagValues;
  // The world's gates as the application declares them in code: one gate per gated tool, no condition.
  const gateSpecs: GateSpec[] = [...gates].map(([tool, gate]) => ({
    id: gate,
    tools: [tool],
    approvers: { roles: ['operator', 'admin'], count: 1 },
    expiresInSeconds: 86_400,
    risk: 'medium',
    origin: 'code',
  }));
  const gateSet = mergeGates(gateSpecs, []);
  const needsApprovalLookup = (tool: string): boolean => gates.has(tool) || policy.askAnyTool || policy.askTools.has(tool);
  const engine = new PermissionEngine({
    sources: () => [
      createRbacSource(),
      createAgentAllowlistSource(() => directory),
      createFlagSource(world.guards),
      createPolicySource(() => policy),
      createHitlSource(),
    ],
    gates: () => gateSet,
    ports: {
      flagValues: () => flagValues,
      approvalState: (ctx, gate) => (gate || needsApprovalLookup(ctx.tool) ? NO_APPROVAL_YET : undefined),
    },
  });
  return { engine, needsApprovalLookup };
}

// ---------------------------------------------------------------------------------------------------------------
// Measurement
// ---------------------------------------------------------------------------------------------------------------

/** Keeps the results alive so the JIT cannot drop the calls. */
let sink = 0;

interface BatchRun {
  calls: number;
  totalNs: number;
  /** mean ns per call of each batch */
  perBatch: Samples;
}

interface RunLimits {
  batch: number;
  minCalls: number;
  minMs: number;
  maxMs: number;
}

function runBatches(engine: PermissionEngine, contexts: readonly ToolContext[], limits: RunLimits): BatchRun {
  const perBatch = new Samples(Math.ceil(limits.minCalls / limits.batch) + 16);
  const n = contexts.length;
  const { batch } = limits;
  let idx = 0;
  let calls = 0;
  let totalNs = 0;
  const start = nowNs();
  const minNs = BigInt(limits.minMs) * 1_000_000n;
  const maxNs = BigInt(limits.maxMs) * 1_000_000n;
  for (;;) {
    const t0 = nowNs();
    for (let k = 0; k < batch; k++) {
      const r = engine.check(contexts[idx]!);
      sink += r.trace.length;
      if (++idx === n) idx = 0;
    }
    const t1 = nowNs();
    const dt = Number(t1 - t0);
    totalNs += dt;
    calls += batch;
    perBatch.push(dt / batch);
    const elapsed = t1 - start;
    if ((calls >= limits.minCalls && elapsed >= minNs) || elapsed >= maxNs) break;
  }
  return { calls, totalNs, perBatch };
}

/** runBatches for the bare reference loop: the same harness, batching and stream, a call of the loop instead of check(). */
function runBareBatches(decide: (c: ToolContext) => BareResult, contexts: readonly ToolContext[], limits: RunLimits): BatchRun {
  const perBatch = new Samples(Math.ceil(limits.minCalls / limits.batch) + 16);
  const n = contexts.length;
  const { batch } = limits;
  let idx = 0;
  let calls = 0;
  let totalNs = 0;
  const start = nowNs();
  const minNs = BigInt(limits.minMs) * 1_000_000n;
  const maxNs = BigInt(limits.maxMs) * 1_000_000n;
  for (;;) {
    const t0 = nowNs();
    for (let k = 0; k < batch; k++) {
      const r = decide(contexts[idx]!);
      sink += r.trace.length;
      if (++idx === n) idx = 0;
    }
    const t1 = nowNs();
    const dt = Number(t1 - t0);
    totalNs += dt;
    calls += batch;
    perBatch.push(dt / batch);
    const elapsed = t1 - start;
    if ((calls >= limits.minCalls && elapsed >= minNs) || elapsed >= maxNs) break;
  }
  return { calls, totalNs, perBatch };
}

/**
 * Does the bare loop decide every call as the engine does? Same decision, same rule source, and the same trace (the
 * rule sources of every matched rule, in order). Returns the number of calls on which they differ.
 */
export function bareMismatches(engine: PermissionEngine, decide: (c: ToolContext) => BareResult, contexts: readonly ToolContext[]): { mismatches: number; first?: string } {
  let mismatches = 0;
  let first: string | undefined;
  for (const c of contexts) {
    const e = engine.check(c);
    const b = decide(c);
    let same = e.decision === b.decision && e.ruleSource === b.ruleSource && e.trace.length === b.trace.length;
    for (let i = 0; same && i < e.trace.length; i++) {
      const a = e.trace[i]!.attribution;
      if ((a.id === undefined ? a.source : `${a.source}:${a.id}`) !== b.trace[i]!.ruleSource) same = false;
    }
    if (!same) {
      mismatches++;
      first ??= `${c.agent} ${c.tool}: engine ${e.decision} ${e.ruleSource} [${e.trace.map((r) => r.attribution.source + ':' + (r.attribution.id ?? '')).join(', ')}], bare ${b.decision} ${b.ruleSource} [${b.trace.map((r) => r.ruleSource).join(', ')}]`;
    }
  }
  return { mismatches, first };
}

/** The median cost of an empty pair of hrtime.bigint() calls, subtracted from single-call timings. */
export function timerOverheadNs(): number {
  const s = new Samples(100_000);
  for (let i = 0; i < 100_000; i++) {
    const t0 = nowNs();
    const t1 = nowNs();
    s.push(Number(t1 - t0));
  }
  return s.percentiles([50])[0] ?? 0;
}

/** Time every call on its own, over the mixed stream; returns ns per call (timer overhead subtracted). */
function runSingles(engine: PermissionEngine, contexts: readonly ToolContext[], overheadNs: number): Float64Array {
  const out = new Float64Array(contexts.length);
  for (let i = 0; i < contexts.length; i++) {
    const ctx = contexts[i]!;
    const t0 = nowNs();
    const r = engine.check(ctx);
    const t1 = nowNs();
    sink += r.trace.length;
    out[i] = Math.max(0, Number(t1 - t0) - overheadNs);
  }
  return out;
}

function warmUp(engine: PermissionEngine, contexts: readonly ToolContext[], passes: number, maxMs: number): void {
  const end = Date.now() + maxMs;
  for (let p = 0; p < passes; p++) {
    for (let i = 0; i < contexts.length; i++) {
      sink += engine.check(contexts[i]!).trace.length;
      if ((i & 1023) === 0 && Date.now() > end) return;
    }
  }
}

function samplesOf(values: Float64Array): Samples {
  const s = new Samples(values.length + 1);
  for (let i = 0; i < values.length; i++) s.push(values[i] ?? Number.NaN);
  return s;
}

function selectSamples(values: Float64Array, indexes: readonly number[]): Samples {
  const s = new Samples(indexes.length + 1);
  for (const i of indexes) s.push(values[i] ?? Number.NaN);
  return s;
}

// ---------------------------------------------------------------------------------------------------------------
// The benchmark
// ---------------------------------------------------------------------------------------------------------------

export interface LatencyRow {
  label: string;
  /** share of the workload in this class */
  share: number;
  /** batched: calls, throughput and the distribution of per-call means of 64-call batches */
  calls: number;
  decisionsPerSec: number;
  p50Us: number;
  p99Us: number;
  /** individually timed calls (timer overhead subtracted), from the mixed stream */
  singleCalls: number;
  singleP50Us: number;
  singleP99Us: number;
  singleP999Us: number;
}

export interface ScalingRow {
  rules: number;
  /** base: the 1,000-rule policy; denser: more rules about the same agents and tools; wider: about other ones */
  shape: 'base' | 'denser' | 'wider';
  yamlBytes: number;
  parseMs: number;
  /** distinct calls of the workload used at this size */
  measuredCalls: number;
  /** compiled policy rules a tool call has to test, on average over the workload */
  candidatesPerCall: number;
  /** rules in the trace (every rule every source emitted), on average */
  traceLength: number;
  decisionsPerSec: number;
  p50Us: number;
  p99Us: number;
  noLookupDecisionsPerSec: number;
  noLookupP50Us: number;
  noLookupP99Us: number;
  noLookupSingleP99Us: number;
  mix: Record<Decision, number>;
}

/** The engine against the bare indexed five-source loop (bench/bare-loop.ts), same world, stream and batching. */
export interface BareComparison {
  /** calls of the workload on which the loop and the engine differ (decision, rule source or trace): must be 0 */
  mismatches: number;
  rounds: number;
  /** medians over the rounds of the mean ns per decision (64-call batches over the mixed stream) */
  engineNs: number;
  bareNs: number;
  /** median of the per-round ratios engine / bare */
  ratio: number;
  ratios: number[];
}

export interface EngineBenchResult {
  bare: BareComparison;
  agents: number;
  tools: number;
  rules: number;
  contexts: number;
  batch: number;
  timerOverheadNs: number;
  parseMs: number;
  mix: Record<Decision, number>;
  rows: LatencyRow[];
  /** the same stream with a CEL condition on every n-th rule */
  conditions: { every: number; decisionsPerSec: number };
  scaling: ScalingRow[];
}

export interface EngineBenchOptions {
  contexts?: number;
  rules?: number;
  scaling?: readonly number[];
  batch?: number;
  /** rounds of the engine-vs-bare-loop comparison (default 21) */
  bareRounds?: number;
  /** stop after the engine-vs-bare-loop comparison (for profiling and quick measurements); the result has only `bare` */
  bareOnly?: boolean;
  log?: (line: string) => void;
}

function candidatesPerCall(policy: CompiledPolicy, contexts: readonly ToolContext[]): number {
  let total = 0;
  for (const c of contexts) {
    // What the policy source tests per call: the memoised candidates of this (tool, agent).
    total += candidateRules(policy, c.tool, c.agent).length;
  }
  return total / contexts.length;
}

function classify(engine: BenchEngine, contexts: readonly ToolContext[]) {
  const byDecision: Record<Decision, number[]> = { ALLOW: [], DENY: [], ASK: [] };
  const noLookup: number[] = [];
  const lookup: number[] = [];
  let traces = 0;
  contexts.forEach((c, i) => {
    const r = engine.engine.check(c);
    traces += r.trace.length;
    byDecision[r.decision].push(i);
    (engine.needsApprovalLookup(c.tool) ? lookup : noLookup).push(i);
  });
  const mix = { ALLOW: byDecision.ALLOW.length, DENY: byDecision.DENY.length, ASK: byDecision.ASK.length };
  return { byDecision, noLookup, lookup, mix, traceLength: traces / contexts.length };
}

const us = (ns: number | undefined): number => (ns ?? Number.NaN) / 1000;

export async function runEngineBench(options: EngineBenchOptions = {}): Promise<EngineBenchResult> {
  const log = options.log ?? (() => undefined);
  const contextCount = options.contexts ?? 100_000;
  const ruleCount = options.rules ?? 1_000;
  const batch = options.batch ?? 64;
  const world = buildWorld();

  const gen = generatePolicy(world, ruleCount);
  const t0 = performance.now();
  const policy = parsePolicy(gen.text, 'bench-policy.yaml');
  const parseMs = performance.now() - t0;
  log(`engine: ${ruleCount} rules parsed and compiled in ${parseMs.toFixed(0)} ms`);
  const contexts = generateWorkload(world, gen.hints, contextCount);
  const be = buildEngine(world, policy);

  warmUp(be.engine, contexts, 3, 10_000);
  const cls = classify(be, contexts);
  const overheadNs = timerOverheadNs();
  log(`engine: timer overhead ${overheadNs} ns; mix ALLOW ${cls.mix.ALLOW} / DENY ${cls.mix.DENY} / ASK ${cls.mix.ASK}`);

  // Individually timed calls over the mixed stream: one pass to settle, the second one is reported.
  runSingles(be.engine, contexts, overheadNs);
  const measured = runSingles(be.engine, contexts, overheadNs);

  const rows: LatencyRow[] = [];
  const addRow = (label: string, indexes: readonly number[] | 'all', limits: RunLimits) => {
    const subset = indexes === 'all' ? contexts : indexes.map((i) => contexts[i]!);
    if (subset.length === 0) return;
    warmUp(be.engine, subset, 1, 2_000);
    const run = runBatches(be.engine, subset, limits);
    const [p50, p99] = run.perBatch.percentiles([50, 99]);
    const single = indexes === 'all' ? samplesOf(measured) : selectSamples(measured, indexes);
    const [s50, s99, s999] = single.percentiles([50, 99, 99.9]);
    rows.push({
      label,
      share: subset.length / contexts.length,
      calls: run.calls,
      decisionsPerSec: (run.calls / run.totalNs) * 1e9,
      p50Us: us(p50),
      p99Us: us(p99),
      singleCalls: single.length,
      singleP50Us: us(s50),
      singleP99Us: us(s99),
      singleP999Us: us(s999),
    });
    log(`engine: ${label}: ${fmtInt((run.calls / run.totalNs) * 1e9)} decisions/s`);
  };
  const mainLimits: RunLimits = { batch, minCalls: 300_000, minMs: 1_500, maxMs: 6_000 };
  const classLimits: RunLimits = { batch, minCalls: 100_000, minMs: 500, maxMs: 3_000 };
  addRow('all calls (mixed stream)', 'all', mainLimits);

  // The reference: the bare indexed five-source loop, checked against the engine on every call, then timed in rounds
  // in which the two take turns (the order reversed every other round), each round the same stream and batching.
  const bareLoop = buildBareLoop(world, policy);
  const agreement = bareMismatches(be.engine, bareLoop, contexts);
  if (agreement.mismatches > 0) {
    // Not the same work: a ratio against it would mean nothing.
    throw new Error(`The bare loop differs from the engine on ${agreement.mismatches} calls, e.g. ${agreement.first}`);
  }
  for (let p = 0; p < 3; p++) for (const c of contexts) sink += bareLoop(c).trace.length;
  // Many short rounds rather than a few long ones: on a shared machine the pairs stay close in time.
  const bareLimits: RunLimits = { batch, minCalls: 50_000, minMs: 150, maxMs: 2_000 };
  const bareRounds = options.bareRounds ?? 21;
  const engineNs: number[] = [];
  const bareNs: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < bareRounds; round++) {
    const timeEngine = () => {
      const r = runBatches(be.engine, contexts, bareLimits);
      return r.totalNs / r.calls;
    };
    const timeBare = () => {
      const r = runBareBatches(bareLoop, contexts, bareLimits);
      return r.totalNs / r.calls;
    };
    let e: number;
    let b: number;
    if (round % 2 === 0) {
      e = timeEngine();
      b = timeBare();
    } else {
      b = timeBare();
      e = timeEngine();
    }
    engineNs.push(e);
    bareNs.push(b);
    ratios.push(e / b);
  }
  const median = (xs: readonly number[]) => {
    const s = [...xs].sort((x, y) => x - y);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const bare: BareComparison = {
    mismatches: agreement.mismatches,
    rounds: bareRounds,
    engineNs: median(engineNs),
    bareNs: median(bareNs),
    ratio: median(ratios),
    ratios,
  };
  log(`engine: vs bare loop: engine ${bare.engineNs.toFixed(0)} ns, bare ${bare.bareNs.toFixed(0)} ns, ratio ${bare.ratio.toFixed(2)}x (rounds: ${ratios.map((x) => x.toFixed(2)).join(' ')}), ${bare.mismatches} mismatches`);
  if (options.bareOnly) return { bare } as EngineBenchResult;

  addRow('no approval lookup (not gated)', cls.noLookup, classLimits);
  addRow('approval lookup (gated)', cls.lookup, classLimits);
  for (const d of DECISIONS) addRow(`decision ${d}`, cls.byDecision[d], classLimits);

  // Conditions: the same policy with a `when:` on every 10th rule (true for every call, so the decisions are the same).
  const condPolicy = parsePolicy(generatePolicy(world, ruleCount, { conditionEvery: 10 }).text, 'bench-policy.yaml');
  const ce = buildEngine(world, condPolicy);
  warmUp(ce.engine, contexts, 2, 10_000);
  const condMix = classify(ce, contexts).mix;
  if (condMix.ALLOW !== cls.mix.ALLOW || condMix.DENY !== cls.mix.DENY || condMix.ASK !== cls.mix.ASK) {
    throw new Error('The conditions changed the decisions: the comparison would not be fair.');
  }
  const condRun = runBatches(ce.engine, contexts, mainLimits);
  const conditions = { every: 10, decisionsPerSec: (condRun.calls / condRun.totalNs) * 1e9 };
  log(`engine: with conditions on every 10th rule: ${fmtInt(conditions.decisionsPerSec)} decisions/s`);

  // Scaling: the same world and workload, 10x and 100x the rules. A slow configuration is measured on fewer calls
  // (about 1.5 s of work per phase) so that the whole run stays within a couple of minutes.
  // Two ways to grow: "denser" (every extra rule is about the same 200 agents and 200 tools, so a call matches more
  // rules and the trace grows), and "wider" (the extra rules are about other teams' agents and tools, so a call
  // matches the same rules: a flat cost here means the policy index works).
  const scaling: ScalingRow[] = [];
  const sizes = options.scaling ?? [1_000, 10_000, 100_000];
  const cases: { n: number; shape: ScalingRow['shape'] }[] = [
    ...sizes.map((n) => ({ n, shape: n === ruleCount ? ('base' as const) : ('denser' as const) })),
    ...sizes.filter((n) => n !== ruleCount).map((n) => ({ n, shape: 'wider' as const })),
  ];
  for (const { n, shape } of cases) {
    const g = shape === 'base' ? gen : generatePolicy(world, n, shape === 'wider' ? { foreignFrom: ruleCount } : {});
    const s0 = performance.now();
    const p = shape === 'base' ? policy : parsePolicy(g.text, 'bench-policy.yaml');
    const pMs = shape === 'base' ? parseMs : performance.now() - s0;
    const e = buildEngine(world, p);
    const probe = contexts.slice(0, 1_000);
    warmUp(e.engine, probe, 1, 2_000);
    const p0 = performance.now();
    warmUp(e.engine, probe, 1, 2_000);
    const estimateMs = (performance.now() - p0) / probe.length;
    const subsetSize = Math.max(2_000, Math.min(30_000, Math.round(1_500 / Math.max(estimateMs, 1e-6))));
    const subset = contexts.slice(0, subsetSize);
    warmUp(e.engine, subset, 2, 3_000);
    const c = classify(e, subset);
    const limits: RunLimits = { batch, minCalls: Math.min(60_000, subsetSize), minMs: 1_000, maxMs: 3_000 };
    const all = runBatches(e.engine, subset, limits);
    const noLookupContexts = c.noLookup.map((i) => subset[i]!);
    const nl = runBatches(e.engine, noLookupContexts, limits);
    const nlSingles = runSingles(e.engine, noLookupContexts, overheadNs);
    const [a50, a99] = all.perBatch.percentiles([50, 99]);
    const [n50, n99] = nl.perBatch.percentiles([50, 99]);
    const [ns99] = samplesOf(nlSingles).percentiles([99]);
    scaling.push({
      rules: n,
      shape,
      yamlBytes: g.text.length,
      parseMs: pMs,
      measuredCalls: subsetSize,
      candidatesPerCall: candidatesPerCall(p, subset),
      traceLength: c.traceLength,
      decisionsPerSec: (all.calls / all.totalNs) * 1e9,
      p50Us: us(a50),
      p99Us: us(a99),
      noLookupDecisionsPerSec: (nl.calls / nl.totalNs) * 1e9,
      noLookupP50Us: us(n50),
      noLookupP99Us: us(n99),
      noLookupSingleP99Us: us(ns99),
      mix: c.mix,
    });
    log(`engine: scaling ${n} rules (${shape}): parse ${pMs.toFixed(0)} ms, ${fmtInt((all.calls / all.totalNs) * 1e9)} decisions/s`);
  }

  if (sink === -1) log('unreachable');
  return {
    bare,
    agents: world.agents.length,
    tools: world.tools.length,
    rules: ruleCount,
    contexts: contexts.length,
    batch,
    timerOverheadNs: overheadNs,
    parseMs,
    mix: cls.mix,
    rows,
    conditions,
    scaling,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------------------------

function quartiles(xs: readonly number[]): string {
  const s = [...xs].sort((x, y) => x - y);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))] ?? Number.NaN;
  return `${at(0.25).toFixed(2)}–${at(0.75).toFixed(2)}x`;
}

export function formatEngineResult(r: EngineBenchResult): string {
  const mixTotal = r.mix.ALLOW + r.mix.DENY + r.mix.ASK;
  const pct = (n: number, total: number) => `${((100 * n) / total).toFixed(1)}%`;
  const main = markdownTable(
    ['class', 'share', 'decisions/s', 'p50 µs', 'p99 µs', 'single p50 µs', 'single p99 µs', 'single p99.9 µs'],
    r.rows.map((row) => [
      row.label,
      pct(row.share, 1),
      fmtInt(row.decisionsPerSec),
      fmt(row.p50Us),
      fmt(row.p99Us),
      fmt(row.singleP50Us),
      fmt(row.singleP99Us),
      fmt(row.singleP999Us),
    ]),
  );
  const all = r.rows[0];
  const conditionsLine = all
    ? `With a CEL \`when:\` on every ${r.conditions.every}th rule (true for every call: same decisions): ${fmtInt(r.conditions.decisionsPerSec)} decisions/s, ` +
      `${(all.decisionsPerSec / r.conditions.decisionsPerSec).toFixed(2)}x the cost per decision of the same stream without conditions.`
    : '';
  const base = r.scaling[0];
  const scaling = markdownTable(
    ['YAML rules', 'growth', 'YAML size', 'parse+compile', 'calls', 'candidates/call', 'trace len', 'decisions/s', 'µs/decision', 'vs 1k', 'p99 µs', 'no-lookup p50 µs', 'no-lookup p99 µs', 'no-lookup single p99 µs', 'DENY share'],
    r.scaling.map((s) => {
      const perDecision = 1e6 / s.decisionsPerSec;
      const basePer = base ? 1e6 / base.decisionsPerSec : perDecision;
      const total = s.mix.ALLOW + s.mix.DENY + s.mix.ASK;
      return [
        fmtInt(s.rules),
        s.shape,
        `${(s.yamlBytes / 1e6).toFixed(1)} MB`,
        `${fmtInt(s.parseMs)} ms`,
        fmtInt(s.measuredCalls),
        fmt(s.candidatesPerCall),
        fmt(s.traceLength),
        fmtInt(s.decisionsPerSec),
        fmt(perDecision),
        `${(perDecision / basePer).toFixed(2)}x`,
        fmt(s.p99Us),
        fmt(s.noLookupP50Us),
        fmt(s.noLookupP99Us),
        fmt(s.noLookupSingleP99Us),
        pct(s.mix.DENY, total),
      ];
    }),
  );
  const b = r.bare;
  const bareLine =
    `Against a bare indexed five-source loop (\`bench/bare-loop.ts\`: RBAC, allowlist Set, flag map, the same policy ` +
    `index with argument matching, the gate; decision, rule source and trace), same stream and ${r.batch}-call batching, ` +
    `${b.rounds} alternating rounds: engine ${fmt(b.engineNs)} ns, bare loop ${fmt(b.bareNs)} ns per decision ` +
    `(medians): **engine/bare ${b.ratio.toFixed(2)}x** (median of the per-round ratios; middle half ${quartiles(b.ratios)}); ` +
    `${fmtInt(b.mismatches)} mismatches in decision, rule source or trace over all ${fmtInt(r.contexts)} calls.`;
  return [
    `Engine: ${r.agents} agents x 10 tools (of ${r.tools}), 20 flagged tools, 10 gated tools, ${fmtInt(r.rules)} YAML rules; ` +
      `${fmtInt(r.contexts)} calls (ALLOW ${pct(r.mix.ALLOW, mixTotal)}, DENY ${pct(r.mix.DENY, mixTotal)}, ASK ${pct(r.mix.ASK, mixTotal)}); ` +
      `check() with trace. p50/p99 = per-call mean of ${r.batch}-call batches; single = each call timed alone ` +
      `(hrtime overhead ${r.timerOverheadNs} ns subtracted).`,
    '',
    main,
    '',
    bareLine,
    '',
    conditionsLine,
    '',
    'Scaling with the number of YAML rules (same world, same rule mix, the first `calls` calls of the same workload; ' +
      'the smaller policy is a prefix of the larger one). denser = the extra rules are about the same 200 agents and ' +
      'tools (a call matches more rules, the trace grows); wider = the extra rules are about other agents and tools ' +
      '(a call matches the same rules: flat is the goal). candidates/call = compiled rules the policy source tests per ' +
      'call; trace len = rules in the trace; µs/decision = 1 / throughput of the mixed stream.',
    '',
    scaling,
  ].join('\n');
}

if (isMain(import.meta.url)) {
  // --no-scaling: only the 1,000-rule section (e.g. under --cpu-prof); --rules=N: another policy size
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const rules = arg('rules') ? Number(arg('rules')) : undefined;
  const bareOnly = process.argv.includes('--bare-only');
  runEngineBench({ log: (l) => console.error(l), rules, scaling: process.argv.includes('--no-scaling') ? [] : undefined, bareOnly })
    .then((r) => console.log(bareOnly ? JSON.stringify(r.bare) : formatEngineResult(r)))
    .catch((e: unknown) => {
      console.error(e);
      process.exitCode = 1;
    });
}
