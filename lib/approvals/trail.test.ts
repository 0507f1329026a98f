import { describe, expect, it } from 'vitest';
import { CHAIN_COLUMNS, chainHash, encodeRow, GENESIS_HASH } from '@/lib/audit/trail/chain';
import { trailProblem, type ApprovalBinding, type TrailRow } from './trail';

const approval: ApprovalBinding = {
  id: 'apr_trail0001',
  gate: 'deploy',
  agentName: 'deployer',
  toolName: 'deploy_serving',
  argumentsHash: 'hmac1:abc',
  requestedBy: 'agent:deployer',
  approvalsRequired: 1,
};
const binding = { gate: 'deploy', agent: 'deployer', tool: 'deploy_serving', arguments_hash: 'hmac1:abc', requested_by: 'agent:deployer' };

/** Events chained as the recorder chains them (each following the one before). */
function chained(events: { type: string; actor: string; role?: string; detail: Record<string, unknown> }[]): TrailRow[] {
  let prev = GENESIS_HASH;
  return events.map((e, i) => {
    const row = {
      id: i + 1,
      decision_id: null,
      type: e.type,
      actor: e.actor,
      actor_role: e.role ?? null,
      outcome: 'succeeded',
      target: approval.id,
      detail_json: JSON.stringify(e.detail),
      policy_revision: null,
      ip: null,
      timestamp: 1_800_000_000 + i,
    };
    const hash = chainHash(prev, row.id, encodeRow(CHAIN_COLUMNS.security_events.map((c) => row[c])));
    const out = { ...row, prev_hash: prev, row_hash: hash };
    prev = hash;
    return out;
  });
}

const requested = (detail: Record<string, unknown> = {}) => ({ type: 'approval.requested', actor: 'agent:deployer', detail: { ...binding, approvals_required: 1, approver_roles: ['operator', 'admin'], ...detail } });
const approved = (actor: string, role = 'operator', detail: Record<string, unknown> = {}) => ({ type: 'approval.approved', actor, role, detail: { ...binding, approvals_required: 1, approvals_given: 1, complete: true, ...detail } });

describe('an approval held by the trail', () => {
  it('is held when its request and approval name the call and an accepted role completed it', () => {
    expect(trailProblem(approval, chained([requested(), approved('olivia')]))).toBeUndefined();
  });

  it('is not held when an approver had a role the gate did not accept when the call asked', () => {
    expect(trailProblem(approval, chained([requested(), approved('victor', 'viewer')]))).toMatch(/victor approved it as viewer/);
  });

  it('is not held when the requester approved it, or fewer people than the request asked for', () => {
    expect(trailProblem(approval, chained([requested(), approved('agent:deployer')]))).toMatch(/by the requester itself/);
    expect(trailProblem(approval, chained([requested({ approvals_required: 2 }), approved('olivia')]))).toMatch(/holds 1 of the 2 approvals/);
  });

  it('is not held by an approval recorded without the arguments it was given for (before they were recorded)', () => {
    const old = { gate: 'deploy', agent: 'deployer', tool: 'deploy_serving', requested_by: 'agent:deployer' };
    expect(trailProblem(approval, chained([{ type: 'approval.approved', actor: 'olivia', role: 'operator', detail: { ...old, complete: true } }]))).toMatch(/of another call or requester/);
    // A request recorded before then is let be: its approval names the call.
    expect(trailProblem(approval, chained([{ type: 'approval.requested', actor: 'agent:deployer', detail: { gate: 'deploy', agent: 'deployer', tool: 'deploy_serving' } }, approved('olivia')]))).toBeUndefined();
  });

  it('is not held when an event was changed after it was recorded', () => {
    const events = chained([requested(), approved('olivia')]);
    events[1] = { ...events[1]!, actor: 'oscar' };
    expect(trailProblem(approval, events)).toMatch(/event 2 of the approval does not match its hash/);
  });
});
