import { BoundedPairCache } from '../bounded-cache';
import { conditionHolds } from '@/lib/permissions/condition';
import { callMatches, candidateRules, ruleMatches, type CompiledPolicy, type CompiledRule } from '@/lib/permissions/policy';
import type { PermissionContext, PermissionRule, RuleSource } from '@/lib/permissions/types';

const NONE: readonly PermissionRule[] = Object.freeze([]);

/**
 * A rule's `when`, if it has one. A condition that cannot be evaluated (a missing key, a type mismatch) falls on the
 * safe side: a DENY or ASK rule applies, an ALLOW rule does not.
 */
function conditionMet(rule: CompiledRule, context: PermissionContext): boolean {
  return rule.condition === undefined || conditionHolds(rule.condition, context, rule.decision !== 'ALLOW');
}

function emit(rule: CompiledRule, context: PermissionContext): PermissionRule {
  if (rule.decision !== 'ASK' || !context.approval) return rule.emitted;
  // An ASK rule asks until this exact call is approved; then it allows (once), or denies if rejected or expired.
  const a = context.approval;
  const { priority, attribution } = rule.emitted;
  if (a.status === 'approved') return { decision: 'ALLOW', priority, attribution, reason: `${rule.reason} Approved by an operator (approval ${a.id}).` };
  if (a.status === 'rejected') return { decision: 'DENY', priority, attribution, reason: `${rule.reason} Rejected by an operator (approval ${a.id}): ${a.reason ?? 'no reason given'}` };
  if (a.status === 'expired') return { decision: 'DENY', priority, attribution, reason: `${rule.reason} The approval request expired (approval ${a.id}).` };
  if (a.status === 'unverified') return { decision: 'ASK', priority, attribution, reason: `${rule.reason} Approval ${a.id} is not used: ${a.reason ?? 'the audit trail does not hold it'}.` };
  // no approval yet, or one pending: the rule as compiled (ASK, its own reason), shared rather than copied per call
  return rule.emitted;
}

/**
 * What the policy source does for one (tool, agent): the candidates of candidateRules, and, when none of them depends
 * on the call itself (no role, arguments, annotations or `when:` to test, no ASK to turn by the approval state), the
 * rules it emits, built once. Pure data of the compiled policy: memoised per policy object (at most MAX_PLANS), dropped
 * when the policy is replaced.
 */
interface Plan {
  readonly candidates: readonly CompiledRule[];
  /** the emitted rules when every candidate matches unconditionally; undefined when some must be tested per call */
  readonly fixed: readonly PermissionRule[] | undefined;
}

const EMPTY_PLAN: Plan = Object.freeze({ candidates: Object.freeze([]) as readonly CompiledRule[], fixed: NONE });
/**
 * The most (tool, agent) plans kept: about 7 MB at most (measured: some 210 bytes a plan when every call names a new
 * agent). Tool and agent names come from callers, so the least recently used plans are forgotten and planned again;
 * half of the bound holds the engine benchmark's 15,183 pairs.
 */
export const MAX_PLANS = 32_768;

function planOf(candidates: readonly CompiledRule[]): Plan {
  if (candidates.length === 0) return EMPTY_PLAN;
  for (let i = 0; i < candidates.length; i++) {
    const r = candidates[i]!;
    if (r.roles || r.args || r.annotations || r.condition !== undefined || r.decision === 'ASK') return { candidates, fixed: undefined };
  }
  return { candidates, fixed: Object.freeze(candidates.map((r) => r.emitted)) };
}

/**
 * YAML policy: operator rules from config/permission_policies.yaml, attributed `policy:<id>`. Rules are compiled and
 * indexed by tool and agent once; a check looks only at the candidates for its tool and agent, and a (tool, agent)
 * whose candidates all match unconditionally returns the same frozen list every time.
 */
export function createPolicySource(policy: () => CompiledPolicy, options: { maxMemo?: number } = {}): RuleSource & { memoSize(): number } {
  let plansFor: CompiledPolicy | undefined;
  const plans = new BoundedPairCache<Plan>(options.maxMemo ?? MAX_PLANS);
  const planFor = (p: CompiledPolicy, tool: string, agent: string): Plan => {
    if (p !== plansFor) {
      plansFor = p;
      plans.clear();
    }
    let plan = plans.get(tool, agent);
    if (plan === undefined) plans.set(tool, agent, (plan = planOf(candidateRules(p, tool, agent))));
    return plan;
  };
  return {
    name: 'policy',
    attributedTo: 'policy',
    rules(context) {
      const p = policy();
      if (p.rules.length === 0) return NONE;
      if (context.kind === 'tool') {
        const plan = planFor(p, context.tool, context.agent);
        if (plan.fixed !== undefined) return plan.fixed;
        const candidates = plan.candidates;
        const role = context.principal.role;
        const args = context.arguments;
        let out: PermissionRule[] | undefined;
        for (let i = 0; i < candidates.length; i++) {
          const r = candidates[i]!;
          if ((r.roles || r.args || r.annotations) && !callMatches(r, role, args, context.annotations)) continue;
          if (r.condition !== undefined && !conditionMet(r, context)) continue;
          (out ??= []).push(r.decision === 'ASK' ? emit(r, context) : r.emitted);
        }
        return out ?? NONE;
      }
      let out: PermissionRule[] | undefined;
      const c = { kind: context.kind, agent: context.agent, role: context.principal.role, method: context.method, path: context.path };
      for (const r of p.http) if (ruleMatches(r, c) && conditionMet(r, context)) (out ??= []).push(emit(r, context));
      return out ?? NONE;
    },
    memoSize: () => plans.size,
  };
}
