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
 * ASK becomes, is described in bench/README.md ("compare.ts").
 */
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { isMainThread, Worker } from 'node:worker_threads';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { newEnforcer, newModelFromString, type Enforcer } from 'casbin';
import { compileGlob, compileNames, isGlob, matchesName, type NameMatcher } from '@/lib/permissions/glob';
import { parsePolicy, type CompiledPolicy } from '@/lib/permissions/policy';
import { PRIORITY, type Decision, type ToolContext } from '@/lib/permissions/types';
import { buildEngine, buildWorld, generatePolicy, generateWorkload, type BenchWorld } from './engine';
import { fmt, fmtInt, isMain, markdownTable, nowNs, prng, sample, Samples } from './util';

// Node 20's V8 (11.3) inlines JS-to-Wasm calls into optimized code, and a lazy deoptimization while Cedar's wasm is
// on the stack (its JSON callbacks can invalidate optimized code) now and then crashes the process ("Fatal error:
// unreachable code" in Deoptimizer::DoComputeBuiltinContinuation, under statefulIsAuthorized). Not inlining those
// calls avoids it; it costs Cedar nanoseconds on calls of 100 µs and more. V8 flags are per process: set before any
// engine code is optimized (this module is imported before anything runs, in the main thread and in every worker).
setFlagsFromString('--no-turbo-inline-js-wasm-calls');

// ---------------------------------------------------------------------------------------------------------------
// One neutral description of every tool-call rule, from the five sources
// ---------------------------------------------------------------------------------------------------------------

type Scalar = string | number | boolean;

/** A tool-call rule as the engines other than ours see it. undefined = any value. */
interface ToolRule {
  /** the attribution, as our engine writes it: policy:<id>, flag:<name>, hitl:<gate> */
  readonly id: string;
  readonly decision: Decision;
  readonly priority: number;
  readonly agents?: readonly string[];
  readonly tools?: readonly string[];
  readonly roles?: readonly string[];
  readonly args?: Readonly<Record<string, readonly Scalar[]>>;
}

/** An operator rule about HTTP requests: loaded in every engine (never evaluated for a tool call). */
interface HttpRule {
  readonly id: string;
  readonly decision: Decision;
  readonly priority: number;
  readonly roles?: readonly string[];
  readonly methods?: readonly string[];
  readonly paths?: readonly string[];
}

interface Translatable {
  /** flags off, gates, YAML tool rules: every rule that is neither the identity check nor the allowlist */
  rules: ToolRule[];
  http: HttpRule[];
  allowlists: ReadonlyMap<string, ReadonlySet<string>>;
  offFlags: string[];
  /**
   * Tools behind an approval gate. A gate is a requirement, not a rule in the contest (invariant hitl_gates): a call
   * that an engine's own resolution allows still asks while it has no approval (none has, in this workload). Every
   * engine applies it after its own answer, as ours does after its resolution.
   */
  gated: ReadonlySet<string>;
}

const asList = <T>(v: T | readonly T[] | undefined): readonly T[] | undefined =>
  v === undefined ? undefined : Array.isArray(v) ? (v as readonly T[]) : [v as T];

/** A list of name patterns; a lone `*` or `**` means any name (undefined). */
function patterns(v: string | readonly string[] | undefined): readonly string[] | undefined {
  const l = asList(v);
  return l && !l.some((p) => p === '*' || p === '**') ? l : undefined;
}

/** The emulations below support the shapes the generator writes; anything else stops the run instead of lying. */
class Unsupported extends Error {}

function checkGlob(p: string, where: string): void {
  if (!isGlob(p)) return;
  // Casbin's keyMatch and Cedar's `like` both take a trailing `*` (prefix); `?` and inner stars are not emulated.
  if (p.includes('?') || !/^[^*]*\*{1,2}$/.test(p)) throw new Unsupported(`${where}: glob "${p}" is not a prefix glob`);
}

function describe(world: BenchWorld, policy: CompiledPolicy): Translatable {
  const rules: ToolRule[] = [];
  const http: HttpRule[] = [];
  const offFlags: string[] = [];
  const gated = new Set(world.gates.keys());
  for (const g of world.guards) {
    if (world.flagValues.get(g.flag) ?? g.defaultValue) continue;
    offFlags.push(g.flag);
    for (const t of g.tools) rules.push({ id: `flag:${g.flag}`, decision: 'DENY', priority: PRIORITY.flag, tools: [t] });
  }
  for (const [tool, gate] of world.gates) rules.push({ id: `hitl:${gate}`, decision: 'ASK', priority: PRIORITY.hitl, tools: [tool] });
  for (const r of policy.rules) {
    const m = r.source.match;
    const roles = asList(m.role);
    if (r.appliesToHttp && !r.appliesToTools) {
      http.push({ id: r.ruleSource, decision: r.decision, priority: r.priority, roles, methods: asList(m.method), paths: patterns(m.path) });
      continue;
    }
    if (!r.appliesToTools) continue;
    let args: Record<string, Scalar[]> | undefined;
    if (m.arguments) {
      args = {};
      for (const [k, v] of Object.entries(m.arguments)) {
        const values = asList(v) ?? [];
        if (!/^[a-z_][a-z0-9_]*$/i.test(k) || CEDAR_RESERVED.has(k)) throw new Unsupported(`${r.ruleSource}: argument name "${k}"`);
        args[k] = values.map((x) => {
          if (x === null) throw new Unsupported(`${r.ruleSource}: null argument value`);
          if (typeof x === 'number' && !Number.isSafeInteger(x)) throw new Unsupported(`${r.ruleSource}: non-integer argument value`);
          if (typeof x === 'string') checkGlob(x, r.ruleSource);
          return x;
        });
      }
    }
    const rule: ToolRule = { id: r.ruleSource, decision: r.decision, priority: r.priority, agents: patterns(m.agent), tools: patterns(m.tool), roles, args };
    for (const p of [...(rule.agents ?? []), ...(rule.tools ?? [])]) checkGlob(p, r.ruleSource);
    // Only what the emulation below can express: exceptions (ALLOW) under the flag kill switches, restrictions
    // (DENY, ASK) above the allowlist's own ALLOW, and ASK under the kill switches.
    if (r.decision === 'ALLOW' && r.priority >= PRIORITY.flag) throw new Unsupported(`${r.ruleSource}: ALLOW at priority ${r.priority}`);
    if (r.decision === 'ASK' && r.priority >= PRIORITY.flag) throw new Unsupported(`${r.ruleSource}: ASK at priority ${r.priority}`);
    if (r.decision !== 'ALLOW' && r.priority <= PRIORITY.allowlistAllow) throw new Unsupported(`${r.ruleSource}: ${r.decision} at priority ${r.priority}`);
    rules.push(rule);
  }
  return { rules, http, allowlists: world.allowlists, offFlags, gated };
}

// ---------------------------------------------------------------------------------------------------------------
// Cedar: permit = the allowlist, forbid = every restriction, priorities compiled into `unless` exceptions
// (an ALLOW rule has no policy of its own: it only ever beats restrictions, and only allowlisted calls get in)
// ---------------------------------------------------------------------------------------------------------------

const CEDAR_RESERVED = new Set(['true', 'false', 'if', 'then', 'else', 'in', 'is', 'like', 'has', 'principal', 'action', 'resource', 'context', 'permit', 'forbid', 'when', 'unless', '__cedar']);

const lit = (s: string): string => JSON.stringify(s);
const likePattern = (glob: string): string => lit(glob.replace(/\*\*/g, '*'));
const scalarLit = (v: Scalar): string => (typeof v === 'string' ? lit(v) : String(v));

function namesCond(v: 'principal' | 'resource', type: 'Agent' | 'Tool', names: readonly string[]): string {
  const parts = names.map((n) => (isGlob(n) ? `${v}.name like ${likePattern(n)}` : `${v} == ${type}::${lit(n)}`));
  return parts.length === 1 ? parts[0]! : `(${parts.join(' || ')})`;
}

function argsConds(args: Readonly<Record<string, readonly Scalar[]>>): string[] {
  return Object.entries(args).map(([k, values]) => {
    const alts = values.map((x) => (typeof x === 'string' && isGlob(x) ? `context.args.${k} like ${likePattern(x)}` : `context.args.${k} == ${scalarLit(x)}`));
    return `context.args has ${k} && ${alts.length === 1 ? alts[0]! : `(${alts.join(' || ')})`}`;
  });
}

const single = (names: readonly string[] | undefined): string | undefined =>
  names && names.length === 1 && !isGlob(names[0]!) ? names[0] : undefined;

/** The whole condition of a rule as one Cedar expression (used inside `unless` for exceptions). */
function ruleExpr(r: ToolRule): string {
  const conds: string[] = [];
  if (r.agents) conds.push(namesCond('principal', 'Agent', r.agents));
  if (r.tools) conds.push(namesCond('resource', 'Tool', r.tools));
  if (r.roles) conds.push(`[${r.roles.map(lit).join(', ')}].contains(principal.role)`);
  if (r.args) conds.push(...argsConds(r.args));
  return conds.length === 0 ? 'true' : conds.length === 1 ? conds[0]! : `(${conds.join(' && ')})`;
}

function namesMayOverlap(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (!a || !b) return true;
  for (const x of a) {
    for (const y of b) {
      if (isGlob(x) && isGlob(y)) return true;
      if (isGlob(x) ? compileGlob(x).test(y) : isGlob(y) ? compileGlob(y).test(x) : x === y) return true;
    }
  }
  return false;
}

/** Can an exception and a restriction match the same call? Conservative: an extra exception costs, a missing one lies. */
function mayOverlap(a: ToolRule, b: ToolRule): boolean {
  if (!namesMayOverlap(a.agents, b.agents) || !namesMayOverlap(a.tools, b.tools)) return false;
  if (a.roles && b.roles && !a.roles.some((r) => b.roles!.includes(r))) return false;
  return true;
}

export type CedarAllowlist = 'permits' | 'entity-set';

/** The tools a policy can apply to, for slicing: name patterns, any tool, or no tool call at all (HTTP). */
type ToolScope = readonly string[] | 'any' | 'none';

export interface CedarModel {
  policies: Record<string, string>;
  scopes: Record<string, ToolScope>;
  /** forbid policies that mean "needs an approval" (annotated @ask) */
  askIds: ReadonlySet<string>;
  counts: { permits: number; forbids: number; asks: number; http: number; exceptionTerms: number };
}

const fitsTool = (scope: ToolScope, tool: string): boolean =>
  scope === 'any' ? true : scope === 'none' ? false : scope.some((p) => (isGlob(p) ? compileGlob(p).test(tool) : p === tool));

export function toCedar(t: Translatable, allowlist: CedarAllowlist): CedarModel {
  const policies: Record<string, string> = {};
  const scopes: Record<string, ToolScope> = {};
  const askIds = new Set<string>();
  const counts = { permits: 0, forbids: 0, asks: 0, http: 0, exceptionTerms: 0 };
  const call = 'action == Action::"call"';
  if (allowlist === 'permits') {
    // Cedar's documentation: every row of a permissions table becomes its own policy, with the scope populated.
    for (const [agent, tools] of t.allowlists) {
      for (const tool of tools) {
        const id = `agent_allowlist:${agent}:${tool}`;
        policies[id] = `permit (principal == Agent::${lit(agent)}, ${call}, resource == Tool::${lit(tool)});`;
        scopes[id] = [tool];
        counts.permits++;
      }
    }
  } else {
    policies.agent_allowlist = `permit (principal is Agent, ${call}, resource is Tool) when { principal.tools.contains(resource) };`;
    scopes.agent_allowlist = 'any';
    counts.permits++;
  }
  // An agent token may act only as its own agent (priority 1000: nothing overrides it).
  policies['rbac:agent_identity'] = `forbid (principal, ${call}, resource) unless { context.caller == principal };`;
  scopes['rbac:agent_identity'] = 'any';
  counts.forbids++;
  t.rules.forEach((r, i) => {
    if (r.decision === 'ALLOW') return; // it is an exception of the restrictions it outranks (below)
    const agent = single(r.agents);
    const tool = single(r.tools);
    const when: string[] = [];
    if (r.agents && !agent) when.push(namesCond('principal', 'Agent', r.agents));
    if (r.tools && !tool) when.push(namesCond('resource', 'Tool', r.tools));
    if (r.roles) when.push(`[${r.roles.map(lit).join(', ')}].contains(principal.role)`);
    if (r.args) when.push(...argsConds(r.args));
    // Priorities: an ALLOW at the same or a higher priority beats this restriction, and so does an ASK at a higher
    // priority beat a DENY (a DENY above an ASK needs nothing: any satisfied non-@ask forbid means DENY).
    const unless: string[] = [];
    if (r.decision === 'ASK') unless.push('context.approved');
    for (const a of t.rules) {
      const outranks = a.decision === 'ALLOW' ? a.priority >= r.priority : a.decision === 'ASK' && r.decision === 'DENY' && a.priority > r.priority;
      if (outranks && mayOverlap(a, r)) {
        if (a.args) for (const vs of Object.values(a.args)) for (const v of vs) if (typeof v === 'string' && isGlob(v)) throw new Unsupported(`${a.id}: glob argument in an exception`);
        unless.push(ruleExpr(a));
        counts.exceptionTerms++;
      }
    }
    const scope = `principal${agent ? ` == Agent::${lit(agent)}` : ''}, ${call}, resource${tool ? ` == Tool::${lit(tool)}` : ''}`;
    const id = `${r.id}#${i}`;
    const annotation = r.decision === 'ASK' ? `@ask(${lit(r.id)}) ` : '';
    policies[id] =
      `${annotation}forbid (${scope})` +
      (when.length ? ` when { ${when.join(' && ')} }` : '') +
      (unless.length ? ` unless { ${unless.join(' || ')} }` : '') +
      ';';
    scopes[id] = r.tools ?? 'any';
    if (r.decision === 'ASK') {
      askIds.add(id);
      counts.asks++;
    } else {
      counts.forbids++;
    }
  });
  t.http.forEach((r, i) => {
    const when: string[] = [];
    if (r.roles) when.push(`[${r.roles.map(lit).join(', ')}].contains(principal.role)`);
    if (r.methods) when.push(`[${r.methods.map((m) => lit(m.toUpperCase())).join(', ')}].contains(context.method)`);
    if (r.paths) when.push(`(${r.paths.map((p) => (isGlob(p) ? `context.path like ${likePattern(p)}` : `context.path == ${lit(p)}`)).join(' || ')})`);
    const effect = r.decision === 'ALLOW' ? 'permit' : 'forbid';
    policies[`${r.id}#${i}`] = `${effect} (principal, action == Action::"http", resource)${when.length ? ` when { ${when.join(' && ')} }` : ''};`;
    scopes[`${r.id}#${i}`] = 'none';
    counts.http++;
  });
  return { policies, scopes, askIds, counts };
}

type CedarRequest = cedar.StatefulAuthorizationCall;

interface CedarRunner {
  decide(i: number): Decision;
  policyCount: number;
  /** policies per preparsed set (the mean over the slices when sliced) */
  policiesPerSet: number;
  sets: number;
  model: CedarModel;
}

export interface CedarSetup {
  allowlist: CedarAllowlist;
  /**
   * Slice the policy set by tool (one preparsed set per tool, holding the policies whose resource can be that tool):
   * the retrieval index Cedar's documentation has in mind when it asks for populated scopes. Off: one set.
   */
  sliced: boolean;
  setId: string;
}

const callerOf = (c: ToolContext): string | undefined => (c.principal.kind === 'agent' ? c.principal.agent : c.agent);

function cedarArgs(args: Readonly<Record<string, unknown>>): Record<string, cedar.CedarValueJson> {
  const out: Record<string, cedar.CedarValueJson> = {};
  for (const [k, v] of Object.entries(args)) {
    if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isSafeInteger(v))) out[k] = v;
    else throw new Unsupported(`argument "${k}" of type ${typeof v} has no Cedar value here`);
  }
  return out;
}

function cedarRunner(t: Translatable, tools: readonly string[], contexts: readonly ToolContext[], setup: CedarSetup): CedarRunner {
  const { allowlist, setId } = setup;
  const model = toCedar(t, allowlist);
  const preparse = (id: string, policies: Record<string, string>) => {
    const parsed = cedar.preparsePolicySet(id, { staticPolicies: policies });
    if (parsed.type !== 'success') throw new Error(`Cedar refused the policy set: ${parsed.errors.map((e) => e.message).slice(0, 5).join('; ')}`);
  };
  const ids = Object.keys(model.policies);
  const slices = new Set<string>();
  let inSets = 0;
  if (setup.sliced) {
    for (const tool of [...tools, '*']) {
      const slice: Record<string, string> = {};
      for (const id of ids) {
        const scope = model.scopes[id] ?? 'any';
        if (tool === '*' ? scope === 'any' : fitsTool(scope, tool)) slice[id] = model.policies[id]!;
      }
      preparse(`${setId}:${tool}`, slice);
      slices.add(tool);
      inSets += Object.keys(slice).length;
    }
  } else {
    preparse(setId, model.policies);
    inSets = ids.length;
  }
  const setFor = (tool: string): string => (setup.sliced ? `${setId}:${slices.has(tool) ? tool : '*'}` : setId);
  const agentEntities = new Map<string, cedar.EntityJson>();
  const toolEntities = new Map<string, cedar.EntityJson>();
  const agentEntity = (name: string, role: string): cedar.EntityJson => {
    const key = `${name}\u0000${role}`;
    let e = agentEntities.get(key);
    if (!e) {
      const attrs: Record<string, cedar.CedarValueJson> = { name, role };
      if (allowlist === 'entity-set') attrs.tools = [...(t.allowlists.get(name) ?? [])].map((id) => ({ __entity: { type: 'Tool', id } }));
      agentEntities.set(key, (e = { uid: { type: 'Agent', id: name }, attrs, parents: [] }));
    }
    return e;
  };
  const toolEntity = (name: string): cedar.EntityJson => {
    let e = toolEntities.get(name);
    if (!e) toolEntities.set(name, (e = { uid: { type: 'Tool', id: name }, attrs: { name }, parents: [] }));
    return e;
  };
  // Requests are built once per call, outside the timed loops: [not approved, approved].
  const requests: ([CedarRequest, CedarRequest] | undefined)[] = new Array(contexts.length);
  const requestFor = (i: number): [CedarRequest, CedarRequest] => {
    let r = requests[i];
    if (!r) {
      const c = contexts[i]!;
      if (c.requiredRole !== undefined) throw new Unsupported('requiredRole on a tool call');
      const base = {
        principal: { type: 'Agent', id: c.agent },
        action: { type: 'Action', id: 'call' },
        resource: { type: 'Tool', id: c.tool },
        preparsedPolicySetId: setFor(c.tool),
        entities: [agentEntity(c.agent, c.principal.role), toolEntity(c.tool)],
      };
      const caller: cedar.CedarValueJson = { __entity: { type: 'Agent', id: callerOf(c) ?? '' } };
      const args = cedarArgs(c.arguments);
      r = [
        { ...base, context: { caller, approved: false, args } },
        { ...base, context: { caller, approved: true, args } },
      ];
      requests[i] = r;
    }
    return r;
  };
  const authorize = (req: CedarRequest): cedar.Response => {
    const a = cedar.statefulIsAuthorized(req);
    if (a.type !== 'success') throw new Error(`Cedar failed: ${a.errors.map((e) => e.message).join('; ')}`);
    if (a.response.diagnostics.errors.length > 0) {
      throw new Error(`Cedar policy evaluation errors: ${a.response.diagnostics.errors.map((e) => `${e.policyId}: ${e.error.message}`).join('; ')}`);
    }
    return a.response;
  };
  const decide = (i: number): Decision => {
    const [req, approved] = requestFor(i);
    const r = authorize(req);
    if (r.decision === 'allow') return t.gated.has(contexts[i]!.tool) ? 'ASK' : 'ALLOW';
    const reasons = r.diagnostics.reason;
    // deny without a satisfied forbid: no permit (unlisted tool or unknown agent)
    if (reasons.length === 0) return 'DENY';
    for (const id of reasons) if (!model.askIds.has(id)) return 'DENY';
    // only approval gates stand in the way: would an approval let it through? (no: e.g. not in the allowlist)
    return authorize(approved).decision === 'allow' ? 'ASK' : 'DENY';
  };
  const sets = setup.sliced ? slices.size : 1;
  return { decide, policyCount: ids.length, policiesPerSet: inSets / sets, sets, model };
}

// ---------------------------------------------------------------------------------------------------------------
// Casbin: the priority model. Rules sorted by (priority, ALLOW > DENY > ASK); the first matching rule decides.
// ---------------------------------------------------------------------------------------------------------------

const CASBIN_MODEL = `
[request_definition]
r = sub, caller, obj, role, args

[policy_definition]
p = priority, kind, sub, obj, role, args, eft, dec, id
p2 = priority, role, method, path, eft, dec, id

[role_definition]
g = _, _

[policy_effect]
e = priority(p.eft) || deny

[matchers]
m = (p.kind == "rule" && keyMatch(r.sub, p.sub) && keyMatch(r.obj, p.obj) && (p.role == "*" || r.role == p.role) && (p.args == "" || argsMatch(r.args, p.args))) || (p.kind == "identity" && r.caller != r.sub) || (p.kind == "unlisted" && !g(r.sub, r.obj)) || (p.kind == "listed" && g(r.sub, r.obj))
`;

const DECISION_RANK: Record<Decision, number> = { ALLOW: 0, DENY: 1, ASK: 2 };
/** Casbin: lower value = higher priority; policies are kept sorted as strings, hence the fixed width. */
const casbinPriority = (priority: number, d: Decision): string => String((1_000_000 - priority) * 3 + DECISION_RANK[d]).padStart(8, '0');

interface ArgTest {
  key: string;
  names: NameMatcher;
  others: ReadonlySet<Scalar>;
}

/** A matcher function registered with addFunction: arguments as the request's object, the rule's as JSON text. */
function makeArgsMatch(): (args: unknown, spec: unknown) => boolean {
  const compiled = new Map<string, ArgTest[]>();
  return (args, spec) => {
    const text = String(spec);
    let tests = compiled.get(text);
    if (!tests) {
      const o = JSON.parse(text) as Record<string, Scalar[]>;
      tests = Object.entries(o).map(([key, vs]) => ({
        key,
        names: compileNames(vs.filter((v): v is string => typeof v === 'string')),
        others: new Set(vs.filter((v) => typeof v !== 'string')),
      }));
      compiled.set(text, tests);
    }
    const a = (args ?? {}) as Record<string, unknown>;
    for (const t of tests) {
      if (!Object.prototype.hasOwnProperty.call(a, t.key)) return false;
      const v = a[t.key];
      if (typeof v === 'string' ? !matchesName(t.names, v) : !((typeof v === 'number' || typeof v === 'boolean') && t.others.has(v))) return false;
    }
    return true;
  };
}

interface CasbinRunner {
  decide(i: number): Decision;
  rows: number;
  groupings: number;
  /** rows per enforcer (the mean over the slices when sliced) */
  rowsPerEnforcer: number;
  enforcers: number;
}

/** One enforcer with these rows (already expanded) and allowlist links, rows checked to be in priority order. */
async function casbinEnforcer(rows: readonly string[][], http: readonly string[][], links: readonly string[][]): Promise<Enforcer> {
  const e: Enforcer = await newEnforcer(newModelFromString(CASBIN_MODEL));
  await e.addFunction('argsMatch', makeArgsMatch());
  // addPolicies() inserts each row before the first row of the same or a lower priority (and, for a row lower than
  // all, before the last one): given from the lowest priority up, the rows end up in priority order. Checked below.
  const sorted = [...rows].sort((a, b) => (a[0]! < b[0]! ? 1 : a[0]! > b[0]! ? -1 : 0));
  await e.addPolicies(sorted);
  if (http.length) await e.addNamedPolicies('p2', [...http]);
  if (links.length) await e.addGroupingPolicies([...links]);
  const stored = await e.getPolicy();
  if (stored.length !== rows.length) throw new Error(`Casbin kept ${stored.length} of ${rows.length} rows`);
  for (let i = 1; i < stored.length; i++) if (stored[i - 1]![0]! > stored[i]![0]!) throw new Error('Casbin policies are not in priority order');
  return e;
}

/**
 * The priority model: identity (1000), the YAML rules, flags off (800), gates (400), and the allowlist as `g` links
 * with one "unlisted" row (900) and one "listed" row (100). `sliced`: one enforcer per tool holding only the rows
 * whose object pattern matches that tool (the same caller-side index as Cedar's slices).
 */
async function casbinRunner(t: Translatable, tools: readonly string[], contexts: readonly ToolContext[], sliced: boolean): Promise<CasbinRunner> {
  const rows: string[][] = [];
  rows.push([casbinPriority(PRIORITY.rbac, 'DENY'), 'identity', '*', '*', '*', '', 'deny', 'DENY', 'rbac:agent_identity']);
  rows.push([casbinPriority(PRIORITY.allowlistDeny, 'DENY'), 'unlisted', '*', '*', '*', '', 'deny', 'DENY', 'agent_allowlist']);
  rows.push([casbinPriority(PRIORITY.allowlistAllow, 'ALLOW'), 'listed', '*', '*', '*', '', 'allow', 'ALLOW', 'agent_allowlist']);
  for (const r of t.rules) {
    const args = r.args ? JSON.stringify(r.args) : '';
    // one Casbin row per (agent pattern, tool pattern, role): a row holds one value per field
    for (const sub of r.agents ?? ['*']) {
      for (const obj of r.tools ?? ['*']) {
        for (const role of r.roles ?? ['*']) {
          rows.push([casbinPriority(r.priority, r.decision), 'rule', sub.replace(/\*\*$/, '*'), obj.replace(/\*\*$/, '*'), role, args, r.decision === 'ALLOW' ? 'allow' : 'deny', r.decision, r.id]);
        }
      }
    }
  }
  const http = t.http.map((r) => [casbinPriority(r.priority, r.decision), (r.roles ?? ['*']).join('|'), (r.methods ?? ['*']).join('|'), (r.paths ?? ['*']).join('|'), r.decision === 'ALLOW' ? 'allow' : 'deny', r.decision, r.id]);
  const links: string[][] = [];
  for (const [agent, list] of t.allowlists) for (const tool of list) links.push([agent, tool]);

  const enforcers = new Map<string, Enforcer>();
  let rowsInEnforcers = 0;
  if (sliced) {
    for (const tool of [...tools, '*']) {
      const slice = rows.filter((r) => (tool === '*' ? r[3] === '*' : fitsTool([r[3]!], tool)));
      enforcers.set(tool, await casbinEnforcer(slice, tool === '*' ? http : [], links.filter((l) => l[1] === tool)));
      rowsInEnforcers += slice.length;
    }
  } else {
    enforcers.set('*', await casbinEnforcer(rows, http, links));
    rowsInEnforcers = rows.length;
  }
  const fallback = enforcers.get('*')!;

  const requests: ([Enforcer, unknown[]] | undefined)[] = new Array(contexts.length);
  const requestFor = (i: number): [Enforcer, unknown[]] => {
    let r = requests[i];
    if (!r) {
      const c = contexts[i]!;
      if (c.requiredRole !== undefined) throw new Unsupported('requiredRole on a tool call');
      requests[i] = r = [enforcers.get(c.tool) ?? fallback, [c.agent, callerOf(c) ?? '', c.tool, c.principal.role, c.arguments]];
    }
    return r;
  };
  const decide = (i: number): Decision => {
    const [e, req] = requestFor(i);
    const [ok, rule] = e.enforceExSync(...req);
    if (ok) return t.gated.has(contexts[i]!.tool) ? 'ASK' : 'ALLOW';
    return rule[7] === 'ASK' ? 'ASK' : 'DENY';
  };
  return { decide, rows: rows.length, groupings: links.length, rowsPerEnforcer: rowsInEnforcers / enforcers.size, enforcers: enforcers.size };
}

// ---------------------------------------------------------------------------------------------------------------
// Measurement: the same harness for every engine
// ---------------------------------------------------------------------------------------------------------------

let sink = 0;

export interface Timing {
  /** calls timed one by one (a prefix of the workload stream) */
  singleCalls: number;
  p50Us: number;
  p99Us: number;
  p999Us: number;
  byDecision: Record<Decision, { calls: number; p50Us: number; p99Us: number }>;
  /** calls in the throughput runs, and decisions per second (the median of the rounds) */
  throughputCalls: number;
  decisionsPerSec: number;
  /** decisions per second of each round */
  roundRates: number[];
  /** timed calls whose decision differed from this engine's (checked after each timed call) */
  mismatches: number;
}

export interface Limits {
  /** calls timed one by one per round, at most (the stream wraps around) */
  singleCallsPerRound: number;
  /** per round: time for calls timed one by one, then for the untimed throughput run */
  singleMs: number;
  throughputMs: number;
  warmUpMs: number;
}

/**
 * Measures one engine a round at a time, so that the engines can take turns: on a shared machine the load changes
 * within a minute, and engines measured one after the other would not see the same machine.
 */
export class Meter {
  private readonly all: Samples;
  private readonly per: Record<Decision, Samples> = { ALLOW: new Samples(), DENY: new Samples(), ASK: new Samples() };
  private next = 0;
  private mismatches = 0;
  private throughputCalls = 0;
  private readonly rates: number[] = [];

  constructor(
    private readonly decide: (i: number) => Decision,
    private readonly expected: readonly Decision[],
    private readonly overheadNs: number,
    private readonly limits: Limits,
  ) {
    this.all = new Samples(Math.min(limits.singleCallsPerRound, 100_000) + 1);
  }

  warmUp(): void {
    const n = this.expected.length;
    const end = performance.now() + this.limits.warmUpMs;
    for (let i = 0; performance.now() < end; i = (i + 8) % n) for (let k = 0; k < 8; k++) sink += this.decide((i + k) % n).length;
  }

  round(): void {
    const { decide, expected, overheadNs, limits } = this;
    // every call timed on its own, continuing the stream where the previous round stopped
    const n = expected.length;
    const singleEnd = nowNs() + BigInt(Math.round(limits.singleMs * 1e6));
    for (let c = 0; c < limits.singleCallsPerRound; c++) {
      const i = this.next;
      if (++this.next === n) this.next = 0;
      const t0 = nowNs();
      const d = decide(i);
      const t1 = nowNs();
      const ns = Math.max(0, Number(t1 - t0) - overheadNs);
      this.all.push(ns);
      const want = expected[i]!;
      this.per[want].push(ns);
      if (d !== want) this.mismatches++;
      if ((c & 15) === 15 && t1 > singleEnd) break;
    }
    // throughput: untimed calls in batches of 32, the clock read between batches
    let calls = 0;
    let idx = 0;
    const t0 = nowNs();
    const end = t0 + BigInt(Math.round(limits.throughputMs * 1e6));
    let t1 = t0;
    do {
      for (let k = 0; k < 32; k++) {
        sink += decide(idx).length;
        if (++idx === n) idx = 0;
      }
      calls += 32;
      t1 = nowNs();
    } while (t1 < end);
    this.throughputCalls += calls;
    this.rates.push((calls / Number(t1 - t0)) * 1e9);
  }

  result(): Timing {
    const [p50, p99, p999] = this.all.percentiles([50, 99, 99.9]);
    const byDecision = {} as Timing['byDecision'];
    for (const d of ['ALLOW', 'DENY', 'ASK'] as const) {
      const [a, b] = this.per[d].percentiles([50, 99]);
      byDecision[d] = { calls: this.per[d].length, p50Us: (a ?? NaN) / 1000, p99Us: (b ?? NaN) / 1000 };
    }
    const sorted = [...this.rates].sort((a, b) => a - b);
    return {
      singleCalls: this.all.length,
      p50Us: (p50 ?? NaN) / 1000,
      p99Us: (p99 ?? NaN) / 1000,
      p999Us: (p999 ?? NaN) / 1000,
      byDecision,
      throughputCalls: this.throughputCalls,
      decisionsPerSec: sorted[Math.floor(sorted.length / 2)] ?? NaN,
      roundRates: this.rates,
      mismatches: this.mismatches,
    };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The benchmark
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
        sink += r.trace.length;
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
