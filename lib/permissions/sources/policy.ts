import { ruleMatches, type CompiledPolicy, type CompiledRule } from '../policy';
import type { PermissionContext, PermissionRule, RuleSource } from '../types';

const NONE: readonly PermissionRule[] = Object.freeze([]);

function emit(rule: CompiledRule, context: PermissionContext): PermissionRule {
  if (rule.decision !== 'ASK' || !context.approval) {
    return { decision: rule.decision, priority: rule.priority, ruleSource: rule.ruleSource, reason: rule.reason };
  }
  // An ASK rule asks until this exact call is approved; then it allows (once), or denies if rejected or expired.
  const a = context.approval;
  const base = { priority: rule.priority, ruleSource: rule.ruleSource };
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
      const c = {
        kind: context.kind,
        agent: context.agent,
        tool: context.tool,
        role: context.principal.role,
        method: context.kind === 'http' ? context.method : undefined,
        path: context.kind === 'http' ? context.path : undefined,
        arguments: context.arguments,
      };
      let out: PermissionRule[] | undefined;
      const consider = (rules: readonly CompiledRule[] | undefined) => {
        if (!rules) return;
        for (const r of rules) if (ruleMatches(r, c)) (out ??= []).push(emit(r, context));
      };
      if (context.kind === 'tool') {
        consider(p.byTool.get(context.tool));
        consider(p.anyToolByAgent.get(context.agent));
        consider(p.anyTool);
      } else {
        consider(p.http);
      }
      return out ?? NONE;
    },
  };
}
