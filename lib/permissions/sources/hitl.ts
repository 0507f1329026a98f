import type { CompiledGate } from '../gates';
import { PRIORITY, type PermissionRule, type RuleSource } from '../types';

const NONE: readonly PermissionRule[] = Object.freeze([]);
const NO_APPROVAL = Object.freeze({ status: 'none' as const, id: undefined, reason: undefined });

/**
 * Human-in-the-loop gates: a call that a gate covers (`context.gate`, chosen by the engine from code declarations and
 * config/gates.yaml, its `when` already evaluated) asks until an approval for this exact call (agent, tool, canonical
 * arguments) exists. An approved call is allowed (once: the engine consumes it), a rejected or expired one is denied.
 * The engine also keeps the gate when a higher rule allows the call: see PermissionEngine.evaluate.
 */
export function createHitlSource(): RuleSource {
  // The "no approval yet" answer is the same for every call of a gate and tool: build it once, keyed by the compiled
  // gate itself (a reloaded gates.yaml compiles new gate objects, so its answers are built afresh).
  const asks = new WeakMap<CompiledGate, Map<string, readonly PermissionRule[]>>();
  const firstAsk = (tool: string, gate: CompiledGate): readonly PermissionRule[] => {
    let byTool = asks.get(gate);
    if (byTool === undefined) asks.set(gate, (byTool = new Map()));
    let r = byTool.get(tool);
    if (r === undefined) {
      const { id, description } = gate;
      r = Object.freeze([
        Object.freeze({ decision: 'ASK' as const, priority: PRIORITY.hitl, attribution: gate.attribution, reason: `Tool "${tool}" needs a human approval (gate "${id}").${description ? ` ${description}` : ''}` }),
      ]);
      // tool names come from callers: a glob gate must not grow its memo without end
      if (byTool.size > 10_000) byTool.clear();
      byTool.set(tool, r);
    }
    return r;
  };
  return {
    name: 'hitl',
    rules(context) {
      if (context.kind !== 'tool' || !context.gate) return NONE;
      const { id: gate, attribution } = context.gate;
      const approval = context.approval ?? NO_APPROVAL;
      switch (approval.status) {
        case 'approved':
          return [{ decision: 'ALLOW', priority: PRIORITY.hitl, attribution, reason: `Approved by an operator (approval ${approval.id}).` }];
        case 'rejected':
          return [{ decision: 'DENY', priority: PRIORITY.hitl, attribution, reason: `Rejected by an operator: ${approval.reason ?? 'no reason given'}` }];
        case 'expired':
          return [{ decision: 'DENY', priority: PRIORITY.hitl, attribution, reason: `The approval request expired before an operator decided it (approval ${approval.id}).` }];
        case 'unverified':
          // Fails closed, and says why: the row says approved, the audit trail does not (lib/approvals/trail.ts).
          return [
            {
              decision: 'ASK',
              priority: PRIORITY.hitl,
              attribution,
              reason: `Approval ${approval.id} is marked approved, but the audit trail does not hold it (${approval.reason ?? 'no reason given'}): it is not used, and this call needs a new approval.`,
            },
          ];
        case 'pending':
          return [{ decision: 'ASK', priority: PRIORITY.hitl, attribution, reason: `Waiting for an operator to approve this "${gate}" call (approval ${approval.id}).` }];
        default:
          return firstAsk(context.tool, context.gate);
      }
    },
  };
}
