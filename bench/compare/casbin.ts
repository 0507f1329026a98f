/** Casbin: the priority model. Rules sorted by (priority, ALLOW > DENY > ASK); the first matching rule decides
 * (bench/compare.ts; bench/README.md says more). */
import { newEnforcer, newModelFromString, type Enforcer } from 'casbin';
import { compileGlob, compileNames, isGlob, matchesName, type NameMatcher } from '@/lib/permissions/glob';
import { PRIORITY, type Decision, type ToolContext } from '@/lib/permissions/types';
import { callerOf, fitsTool } from './cedar';
import { Unsupported, type Scalar, type ToolRule, type Translatable } from './translate';

// ---------------------------------------------------------------------------------------------------------------

export const CASBIN_MODEL = `
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

export const DECISION_RANK: Record<Decision, number> = { ALLOW: 0, DENY: 1, ASK: 2 };
/** Casbin: lower value = higher priority; policies are kept sorted as strings, hence the fixed width. */
export const casbinPriority = (priority: number, d: Decision): string => String((1_000_000 - priority) * 3 + DECISION_RANK[d]).padStart(8, '0');

export interface ArgTest {
  key: string;
  names: NameMatcher;
  others: ReadonlySet<Scalar>;
}

/** A matcher function registered with addFunction: arguments as the request's object, the rule's as JSON text. */
export function makeArgsMatch(): (args: unknown, spec: unknown) => boolean {
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

export interface CasbinRunner {
  decide(i: number): Decision;
  rows: number;
  groupings: number;
  /** rows per enforcer (the mean over the slices when sliced) */
  rowsPerEnforcer: number;
  enforcers: number;
}

/** One enforcer with these rows (already expanded) and allowlist links, rows checked to be in priority order. */
export async function casbinEnforcer(rows: readonly string[][], http: readonly string[][], links: readonly string[][]): Promise<Enforcer> {
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
export async function casbinRunner(t: Translatable, tools: readonly string[], contexts: readonly ToolContext[], sliced: boolean): Promise<CasbinRunner> {
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
