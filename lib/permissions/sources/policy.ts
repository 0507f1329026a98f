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
  const base = { priority: rule.priority, attribution: rule.emitted.attribution };
  if (a.status === 'approved') return { ...base, decision: 'ALLOW', reason: `${rule.reason} Approved by an operator (approval ${a.id}).` };
  if (a.status === 'rejected') return { ...base, decision: 'DENY', reason: `${rule.reason} Rejected by an operator: ${a.reason ?? 'no reason given'}` };
  if (a.status === 'expired') return { ...base, decision: 'DENY', reason: `${rule.reason} The approval request expired.` };
  return { ...base, decision: 'ASK', reason: rule.reason };
}

/**
 * YAML policy: operator rules from config/permission_policies.yaml, attributed `policy:<id>`. Rules are compiled and
 * indexed by tool and agent once; a check looks only at the candidates for its tool and agent.
 */
export function createPolicySource(policy: () => CompiledPolicy): RuleSource {
  return {
    name: 'policy',
    rules(context) {
      const p = policy();
      if (p.rules.length === 0) return NONE;
      let out: PermissionRule[] | undefined;
      if (context.kind === 'tool') {
        const candidates = candidateRules(p, context.tool, context.agent);
        if (candidates.length === 0) return NONE;
        const role = context.principal.role;
        for (let i = 0; i < candidates.length; i++) {
          const r = candidates[i]!;
          if (!callMatches(r, role, context.arguments) || !conditionMet(r, context)) continue;
          (out ??= []).push(r.decision === 'ASK' ? emit(r, context) : r.emitted);
        }
        return out ?? NONE;
      }
      const c = { kind: context.kind, agent: context.agent, role: context.principal.role, method: context.method, path: context.path };
      for (const r of p.http) if (ruleMatches(r, c) && conditionMet(r, context)) (out ??= []).push(emit(r, context));
      return out ?? NONE;
    },
  };
}
