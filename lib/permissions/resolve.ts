import type { Decision, PermissionRule, Resolution } from './types';

/** Within one priority tier: ALLOW beats DENY beats ASK. */
const DECISION_STRENGTH: Record<Decision, number> = { ALLOW: 3, DENY: 2, ASK: 1 };

export const DEFAULT_TOOL_RULE: PermissionRule = Object.freeze({
  decision: 'DENY',
  priority: Number.NEGATIVE_INFINITY,
  attribution: Object.freeze({ source: 'default' }),
  reason: 'No rule allows this tool call (tool calls fail closed).',
});

export const DEFAULT_HTTP_RULE: PermissionRule = Object.freeze({
  decision: 'ALLOW',
  priority: Number.NEGATIVE_INFINITY,
  attribution: Object.freeze({ source: 'default' }),
  reason: 'No rule restricts this request.',
});

/**
 * True when `a` beats `b`: higher priority first, then ALLOW > DENY > ASK within a tier,
 * then a stable tie-break on the attribution so the result never depends on source order.
 */
export function isStronger(a: PermissionRule, b: PermissionRule): boolean {
  if (a.priority !== b.priority) return a.priority > b.priority;
  const sa = DECISION_STRENGTH[a.decision];
  const sb = DECISION_STRENGTH[b.decision];
  if (sa !== sb) return sa > sb;
  const x = a.attribution;
  const y = b.attribution;
  if (x.source !== y.source) return x.source < y.source;
  if (x.id !== y.id) return (x.id ?? '') < (y.id ?? '');
  return a.reason < b.reason;
}

/** The winning rule of a set of matched rules, or the default of the kind when nothing matched. */
export function winningRule(rules: readonly PermissionRule[], kind: 'tool' | 'http'): PermissionRule {
  let best: PermissionRule | undefined;
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i]!;
    if (best === undefined || isStronger(r, best)) best = r;
  }
  return best ?? (kind === 'tool' ? DEFAULT_TOOL_RULE : DEFAULT_HTTP_RULE);
}

/**
 * Resolve a set of matched rules to one decision. Priority orders the tiers; the decision order settles a tier;
 * with no rule at all, tool calls are denied and HTTP requests allowed.
 */
export function resolve(rules: readonly PermissionRule[], kind: 'tool' | 'http'): Resolution {
  const rule = winningRule(rules, kind);
  return { decision: rule.decision, rule, trace: rules };
}
