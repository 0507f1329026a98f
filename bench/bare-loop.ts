/**
 * The reference for the engine benchmark: a bare, hand-written, indexed five-source loop that decides the calls of
 * bench/engine.ts the way the engine does, with nothing generic in it — no source registry, no context object, no
 * plugin interface, no error containment. What it does per call is the least a decision with a trace needs:
 *
 *   RBAC            role vs the required role, and an agent token naming another agent
 *   allowlist       Map<agent, Set<tool>>
 *   feature flags   Map<tool, guards> and the flag values
 *   YAML policy     the same precomputed (tool, agent) index as the engine (candidateRules), then role, arguments
 *                   and `when:` of each candidate
 *   HITL gate       Map<tool, gate>: its ASK in the trace, and the requirement (an ALLOW of a gated call asks)
 *
 * It returns the decision, the winning rule (with its `rule_source` string) and the trace (every matched rule, in
 * source order). bench/engine.ts checks that it gives the same decision and rule source as the engine on every call of
 * the workload, then times both in the same run.
 */
import { conditionHolds } from '@/lib/permissions/condition';
import { candidateRules, type CompiledPolicy } from '@/lib/permissions/policy';
import type { FlagGuard } from '@/lib/permissions/sources';
import { isRoleAtLeast, type Decision, type ToolContext } from '@/lib/permissions/types';

export interface BareRule {
  readonly decision: Decision;
  readonly priority: number;
  readonly source: string;
  readonly id: string | undefined;
  /** `source:id` or `source`, precomputed */
  readonly ruleSource: string;
  readonly reason: string;
}

export interface BareResult {
  decision: Decision;
  ruleSource: string;
  rule: BareRule;
  trace: BareRule[];
}

export interface BareWorld {
  readonly allowlists: ReadonlyMap<string, ReadonlySet<string>>;
  readonly guards: readonly FlagGuard[];
  readonly flagValues: ReadonlyMap<string, boolean>;
  /** tool -> gate id */
  readonly gates: ReadonlyMap<string, string>;
}

const STRENGTH: Record<Decision, number> = { ALLOW: 3, DENY: 2, ASK: 1 };

const rule = (decision: Decision, priority: number, source: string, id: string | undefined, reason: string): BareRule =>
  Object.freeze({ decision, priority, source, id, ruleSource: id === undefined ? source : `${source}:${id}`, reason });

const DEFAULT_DENY = rule('DENY', Number.NEGATIVE_INFINITY, 'default', undefined, 'No rule allows this tool call.');

/** Build the loop for one world and one compiled policy. */
export function buildBareLoop(world: BareWorld, policy: CompiledPolicy, flagValues: ReadonlyMap<string, boolean> = world.flagValues): (c: ToolContext) => BareResult {
  const listed = rule('ALLOW', 100, 'agent_allowlist', undefined, 'The tool is in the allowlist of the agent.');
  const unlisted = rule('DENY', 900, 'agent_allowlist', undefined, 'The tool is not in the allowlist of the agent.');
  const unknownAgent = rule('DENY', 900, 'agent_allowlist', undefined, 'Unknown agent.');
  const identity = rule('DENY', 1000, 'rbac', 'agent_identity', 'The token cannot act as this agent.');
  const rbacRole = new Map<string, BareRule>();
  const flags = new Map<string, { flag: string; defaultValue: boolean; rule: BareRule }[]>();
  for (const g of world.guards) {
    for (const t of g.tools) {
      const list = flags.get(t) ?? [];
      list.push({ flag: g.flag, defaultValue: g.defaultValue, rule: rule('DENY', 800, 'flag', g.flag, `Flag ${g.flag} is off.`) });
      flags.set(t, list);
    }
  }
  const gates = new Map<string, BareRule>();
  for (const [tool, gate] of world.gates) gates.set(tool, rule('ASK', 400, 'hitl', gate, `Gate ${gate}.`));
  // Policy rules in the bare shape, built once per compiled rule.
  const policyRules = new Map<object, BareRule>();
  for (const r of policy.rules) policyRules.set(r, rule(r.decision, r.priority, 'policy', r.id, r.reason));

  const argMatches = (m: { key: string; strings: { exact: ReadonlySet<string>; globs: readonly RegExp[]; any: boolean }; others: ReadonlySet<unknown> }, args: Readonly<Record<string, unknown>>): boolean => {
    if (!Object.prototype.hasOwnProperty.call(args, m.key)) return false;
    const v = args[m.key];
    if (typeof v === 'string') {
      if (m.strings.any || m.strings.exact.has(v)) return true;
      for (const g of m.strings.globs) if (g.test(v)) return true;
      return false;
    }
    return (typeof v === 'number' || typeof v === 'boolean' || v === null) && m.others.has(v);
  };

  return (c: ToolContext): BareResult => {
    const trace: BareRule[] = [];
    const { principal, agent, tool } = c;
    // 1. RBAC
    if (c.requiredRole && !isRoleAtLeast(principal.role, c.requiredRole)) {
      let r = rbacRole.get(c.requiredRole);
      if (!r) rbacRole.set(c.requiredRole, (r = rule('DENY', 1000, 'rbac', c.requiredRole, 'Role below the required role.')));
      trace.push(r);
    }
    if (principal.kind === 'agent' && principal.agent !== agent) trace.push(identity);
    // 2. allowlist
    const tools = world.allowlists.get(agent);
    trace.push(tools === undefined ? unknownAgent : tools.has(tool) ? listed : unlisted);
    // 3. feature flags
    const guards = flags.get(tool);
    if (guards) for (const g of guards) if (!(flagValues.get(g.flag) ?? g.defaultValue)) trace.push(g.rule);
    // 4. YAML policy, through the engine's own (tool, agent) index
    const candidates = candidateRules(policy, tool, agent);
    for (let i = 0; i < candidates.length; i++) {
      const r = candidates[i]!;
      if (r.roles && !r.roles.has(principal.role)) continue;
      if (r.args) {
        let ok = true;
        for (const m of r.args) {
          if (!argMatches(m, c.arguments)) {
            ok = false;
            break;
          }
        }
        if (!ok) continue;
      }
      if (r.condition && !conditionHolds(r.condition, { ...c, flags: flagValues }, r.decision !== 'ALLOW')) continue;
      trace.push(policyRules.get(r)!);
    }
    // 5. HITL gate
    const gate = gates.get(tool);
    if (gate) trace.push(gate);
    // resolution: priority, then ALLOW > DENY > ASK, then a stable tie-break (as the engine's isStronger)
    let best: BareRule = DEFAULT_DENY;
    for (let i = 0; i < trace.length; i++) {
      const r = trace[i]!;
      if (best === DEFAULT_DENY) {
        best = r;
        continue;
      }
      if (r.priority !== best.priority) {
        if (r.priority > best.priority) best = r;
        continue;
      }
      const sr = STRENGTH[r.decision];
      const sb = STRENGTH[best.decision];
      if (sr !== sb) {
        if (sr > sb) best = r;
        continue;
      }
      if (r.source !== best.source) {
        if (r.source < best.source) best = r;
        continue;
      }
      if (r.id !== best.id) {
        if ((r.id ?? '') < (best.id ?? '')) best = r;
        continue;
      }
      if (r.reason < best.reason) best = r;
    }
    // the gate is a requirement: an ALLOW of a gated call without an approval asks
    if (gate && best.decision === 'ALLOW') best = gate;
    return { decision: best.decision, ruleSource: best.ruleSource, rule: best, trace };
  };
}
