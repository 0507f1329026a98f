import { BoundedCache } from '../bounded-cache';
import type { CompiledGate } from '../gates';
import { PRIORITY, type PermissionRule, type RuleSource } from '../types';

const NONE: readonly PermissionRule[] = Object.freeze([]);
const NO_APPROVAL = Object.freeze({ status: 'none' as const, id: undefined, reason: undefined });
/**
 * The most tools whose first ASK is kept (under 1 MB; a glob gate covers tool names callers choose): the least
 * recently used are forgotten and built again.
 */
export const MAX_FIRST_ASKS = 8_192;

/**
 * Human-in-the-loop gates: a call that a gate covers (`context.gate`, chosen by the engine from code declarations and
 * config/gates.yaml, its `when` already evaluated) asks until an approval for this exact call (agent, tool, canonical
 * arguments) exists. An approved call is allowed (once: the engine consumes it), a rejected or expired one is denied.
 * The engine also keeps the gate when a higher rule allows the call: see PermissionEngine.evaluate.
 */
export function createHitlSource(options: { maxMemo?: number } = {}): RuleSource & { memoSize(): number } {
  // The "no approval yet" answer is the same for every call of a gate and tool: build it once per tool (a tool has one
  // gate), with the compiled gate it was built for: a reloaded gates.yaml compiles new gate objects, so its answers are
  // built afresh.
  const asks = new BoundedCache<string, { gate: CompiledGate; rules: readonly PermissionRule[] }>(options.maxMemo ?? MAX_FIRST_ASKS);
  const firstAsk = (tool: string, gate: CompiledGate): readonly PermissionRule[] => {
    const kept = asks.get(tool);
    if (kept !== undefined && kept.gate === gate) return kept.rules;
    const { id, description } = gate;
    const rules = Object.freeze([
      Object.freeze({ decision: 'ASK' as const, priority: PRIORITY.hitl, attribution: gate.attribution, reason: `Tool "${tool}" needs a human approval (gate "${id}").${description ? ` ${description}` : ''}` }),
    ]);
    asks.set(tool, { gate, rules });
    return rules;
  };
  return {
    name: 'hitl',
    attributedTo: 'hitl',
    rules(context) {
      if (context.kind !== 'tool' || !context.gate) return NONE;
      const { id: gate, attribution } = context.gate;
      const approval = context.approval ?? NO_APPROVAL;
      switch (approval.status) {
        case 'approved':
          return [{ decision: 'ALLOW', priority: PRIORITY.hitl, attribution, reason: `Approved by an operator (approval ${approval.id}).` }];
        case 'rejected':
          // The approval is named, so that the denial of a call made again after its rejection says which request it
          // repeats (the audit report counts repeats by it).
          return [{ decision: 'DENY', priority: PRIORITY.hitl, attribution, reason: `Rejected by an operator (approval ${approval.id}): ${approval.reason ?? 'no reason given'}` }];
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
    memoSize: () => asks.size,
  };
}
