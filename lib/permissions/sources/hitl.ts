import { PRIORITY, type PermissionRule, type RuleSource } from '../types';

const NONE: readonly PermissionRule[] = Object.freeze([]);

/**
 * Human-in-the-loop gates: a call that a gate covers (`context.gate`, chosen by the engine from code declarations and
 * config/gates.yaml, its `when` already evaluated) asks until an approval for this exact call (agent, tool, canonical
 * arguments) exists. An approved call is allowed (once: the engine consumes it), a rejected or expired one is denied.
 * The engine also keeps the gate when a higher rule allows the call: see PermissionEngine.evaluate.
 */
export function createHitlSource(): RuleSource {
  // The "no approval yet" answer is the same for every call of a gate: build it once per gate and tool.
  const asks = new Map<string, readonly PermissionRule[]>();
  const firstAsk = (tool: string, gate: string, description: string | undefined): readonly PermissionRule[] => {
    const key = `${tool}\u0000${gate}\u0000${description ?? ''}`;
    let r = asks.get(key);
    if (!r) {
      r = Object.freeze([
        Object.freeze({ decision: 'ASK' as const, priority: PRIORITY.hitl, attribution: Object.freeze({ source: 'hitl', id: gate }), reason: `Tool "${tool}" needs a human approval (gate "${gate}").${description ? ` ${description}` : ''}` }),
      ]);
      if (asks.size > 10_000) asks.clear();
      asks.set(key, r);
    }
    return r;
  };
  return {
    name: 'hitl',
    rules(context) {
      if (context.kind !== 'tool' || !context.gate) return NONE;
      const { id: gate, attribution } = context.gate;
      const approval = context.approval ?? { status: 'none' as const };
      switch (approval.status) {
        case 'approved':
          return [{ decision: 'ALLOW', priority: PRIORITY.hitl, attribution, reason: `Approved by an operator (approval ${approval.id}).` }];
        case 'rejected':
          return [{ decision: 'DENY', priority: PRIORITY.hitl, attribution, reason: `Rejected by an operator: ${approval.reason ?? 'no reason given'}` }];
        case 'expired':
          return [{ decision: 'DENY', priority: PRIORITY.hitl, attribution, reason: `The approval request expired before an operator decided it (approval ${approval.id}).` }];
        case 'pending':
          return [{ decision: 'ASK', priority: PRIORITY.hitl, attribution, reason: `Waiting for an operator to approve this "${gate}" call (approval ${approval.id}).` }];
        default:
          return firstAsk(context.tool, gate, context.gate.description);
      }
    },
  };
}
