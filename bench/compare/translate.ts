/** One neutral description of every tool-call rule of the benchmark's world, from the five sources: what the Cedar
 * and Casbin translations are made from (bench/compare.ts). */
import { compileGlob, compileNames, isGlob, matchesName, type NameMatcher } from '@/lib/permissions/glob';
import type { CompiledPolicy } from '@/lib/permissions/policy';
import { PRIORITY, type Decision, type ToolContext } from '@/lib/permissions/types';
import type { BenchWorld } from '../engine';

export const CEDAR_RESERVED = new Set(['true', 'false', 'if', 'then', 'else', 'in', 'is', 'like', 'has', 'principal', 'action', 'resource', 'context', 'permit', 'forbid', 'when', 'unless', '__cedar']);

export type Scalar = string | number | boolean;

/** A tool-call rule as the engines other than ours see it. undefined = any value. */
export interface ToolRule {
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
export interface HttpRule {
  readonly id: string;
  readonly decision: Decision;
  readonly priority: number;
  readonly roles?: readonly string[];
  readonly methods?: readonly string[];
  readonly paths?: readonly string[];
}

export interface Translatable {
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

export const asList = <T>(v: T | readonly T[] | undefined): readonly T[] | undefined =>
  v === undefined ? undefined : Array.isArray(v) ? (v as readonly T[]) : [v as T];

/** A list of name patterns; a lone `*` or `**` means any name (undefined). */
export function patterns(v: string | readonly string[] | undefined): readonly string[] | undefined {
  const l = asList(v);
  return l && !l.some((p) => p === '*' || p === '**') ? l : undefined;
}

/** The emulations below support the shapes the generator writes; anything else stops the run instead of lying. */
export class Unsupported extends Error {}

export function checkGlob(p: string, where: string): void {
  if (!isGlob(p)) return;
  // Casbin's keyMatch and Cedar's `like` both take a trailing `*` (prefix); `?` and inner stars are not emulated.
  if (p.includes('?') || !/^[^*]*\*{1,2}$/.test(p)) throw new Unsupported(`${where}: glob "${p}" is not a prefix glob`);
}

export function describe(world: BenchWorld, policy: CompiledPolicy): Translatable {
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
