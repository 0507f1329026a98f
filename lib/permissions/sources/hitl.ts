import { PRIORITY, type PermissionRule, type RuleSource } from '../types';

const NONE: readonly PermissionRule[] = Object.freeze([]);

/**
 * Human-in-the-loop gates: a tool declared with requireApproval(gate) asks until an approval for this exact call
 * (agent, tool, canonical arguments) exists. An approved call is allowed (once: the engine consumes it), a rejected or
 * expired one is denied. `gates` maps tool name to gate type.
 */
export function createHitlSource(gates: () => ReadonlyMap<string, string>): RuleSource {
  // The "no approval yet" answer is the same for every call of a tool: build it once per tool and gate.
  const asks = new Map<string, readonly PermissionRule[]>();
  const firstAsk = (tool: string, gate: string): readonly PermissionRule[] => {
    const key = `${tool}\u0000${gate}`;
    let r = asks.get(key);
    if (!r) {
      r = Object.freeze([
        Object.freeze({ decision: 'ASK' as const, priority: PRIORITY.hitl, ruleSource: `hitl:${gate}`, reason: `Tool "${tool}" needs a human approval (gate "${gate}").` }),
      ]);
      asks.set(key, r);
    }
    return r;
  };
  return {
    name: 'hitl',
    rules(context) {
      if (context.kind !== 'tool') return NONE;
      const gate = gates().get(context.tool);
      if (gate === undefined) return NONE;
      const ruleSource = `hitl:${gate}`;
      const approval = context.approval ?? { status: 'none' as const };
      switch (approval.status) {
        case 'approved':
          return [{ decision: 'ALLOW', priority: PRIORITY.hitl, ruleSource, reason: `Approved by an operator (approval ${approval.id}).` }];
        case 'rejected':
          return [{ decision: 'DENY', priority: PRIORITY.hitl, ruleSource, reason: `Rejected by an operator: ${approval.reason ?? 'no reason given'}` }];
        case 'expired':
          return [{ decision: 'DENY', priority: PRIORITY.hitl, ruleSource, reason: `The approval request expired before an operator decided it (approval ${approval.id}).` }];
        case 'pending':
          return [{ decision: 'ASK', priority: PRIORITY.hitl, ruleSource, reason: `Waiting for an operator to approve this "${gate}" call (approval ${approval.id}).` }];
        default:
          return firstAsk(context.tool, gate);
      }
    },
  };
}
