/** Cedar: permit = the allowlist, forbid = every restriction, priorities compiled into `unless` exceptions
 * (bench/compare.ts; the resolution is described in bench/README.md). */
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { compileGlob, isGlob } from '@/lib/permissions/glob';
import { PRIORITY, type Decision, type ToolContext } from '@/lib/permissions/types';
import { Unsupported, type Scalar, type ToolRule, type Translatable } from './translate';


// ---------------------------------------------------------------------------------------------------------------


export const lit = (s: string): string => JSON.stringify(s);
export const likePattern = (glob: string): string => lit(glob.replace(/\*\*/g, '*'));
export const scalarLit = (v: Scalar): string => (typeof v === 'string' ? lit(v) : String(v));

export function namesCond(v: 'principal' | 'resource', type: 'Agent' | 'Tool', names: readonly string[]): string {
  const parts = names.map((n) => (isGlob(n) ? `${v}.name like ${likePattern(n)}` : `${v} == ${type}::${lit(n)}`));
  return parts.length === 1 ? parts[0]! : `(${parts.join(' || ')})`;
}

export function argsConds(args: Readonly<Record<string, readonly Scalar[]>>): string[] {
  return Object.entries(args).map(([k, values]) => {
    const alts = values.map((x) => (typeof x === 'string' && isGlob(x) ? `context.args.${k} like ${likePattern(x)}` : `context.args.${k} == ${scalarLit(x)}`));
    return `context.args has ${k} && ${alts.length === 1 ? alts[0]! : `(${alts.join(' || ')})`}`;
  });
}

export const single = (names: readonly string[] | undefined): string | undefined =>
  names && names.length === 1 && !isGlob(names[0]!) ? names[0] : undefined;

/** The whole condition of a rule as one Cedar expression (used inside `unless` for exceptions). */
export function ruleExpr(r: ToolRule): string {
  const conds: string[] = [];
  if (r.agents) conds.push(namesCond('principal', 'Agent', r.agents));
  if (r.tools) conds.push(namesCond('resource', 'Tool', r.tools));
  if (r.roles) conds.push(`[${r.roles.map(lit).join(', ')}].contains(principal.role)`);
  if (r.args) conds.push(...argsConds(r.args));
  return conds.length === 0 ? 'true' : conds.length === 1 ? conds[0]! : `(${conds.join(' && ')})`;
}

export function namesMayOverlap(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
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
export function mayOverlap(a: ToolRule, b: ToolRule): boolean {
  if (!namesMayOverlap(a.agents, b.agents) || !namesMayOverlap(a.tools, b.tools)) return false;
  if (a.roles && b.roles && !a.roles.some((r) => b.roles!.includes(r))) return false;
  return true;
}

export type CedarAllowlist = 'permits' | 'entity-set';

/** The tools a policy can apply to, for slicing: name patterns, any tool, or no tool call at all (HTTP). */
export type ToolScope = readonly string[] | 'any' | 'none';

export interface CedarModel {
  policies: Record<string, string>;
  scopes: Record<string, ToolScope>;
  /** forbid policies that mean "needs an approval" (annotated @ask) */
  askIds: ReadonlySet<string>;
  counts: { permits: number; forbids: number; asks: number; http: number; exceptionTerms: number };
}

export const fitsTool = (scope: ToolScope, tool: string): boolean =>
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

export type CedarRequest = cedar.StatefulAuthorizationCall;

export interface CedarRunner {
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

export const callerOf = (c: ToolContext): string | undefined => (c.principal.kind === 'agent' ? c.principal.agent : c.agent);

export function cedarArgs(args: Readonly<Record<string, unknown>>): Record<string, cedar.CedarValueJson> {
  const out: Record<string, cedar.CedarValueJson> = {};
  for (const [k, v] of Object.entries(args)) {
    if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isSafeInteger(v))) out[k] = v;
    else throw new Unsupported(`argument "${k}" of type ${typeof v} has no Cedar value here`);
  }
  return out;
}

export function cedarRunner(t: Translatable, tools: readonly string[], contexts: readonly ToolContext[], setup: CedarSetup): CedarRunner {
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
