import { describe, expect, it } from 'vitest';
import { approvalStep, distinguishers, isProductionValue, plainReason, summarize } from './approval-text';
import type { Approval } from './approval-types';

const base = {
  id: 'apr_1', gate: 'deploy', status: 'pending', outcome: 'waiting', agent: 'deployer', tool: 'deploy_serving',
  arguments: { model_id: 'm-42', env: 'prod' }, arguments_hash: 'h', tool_call_id: null, requested_by: 'agent:deployer',
  requested_at: 0, expires_at: 100, rule_source: 'hitl:deploy', reason: 'Tool "deploy_serving" needs a human approval (gate "deploy").',
  decided_by: null, decided_at: null, decision_reason: null, consumed_at: null, gate_description: null, risk: 'high',
  approvals_required: 1, approver_roles: ['operator', 'admin'], approvals: [],
} as unknown as Approval;

describe('the plain words of the approval queue', () => {
  it('marks production values: whole values anywhere, words of place-like arguments', () => {
    expect(isProductionValue('env', 'prod')).toBe(true);
    expect(isProductionValue('target', 'prod-eu')).toBe(true);
    expect(isProductionValue('comment', 'prod-eu')).toBe(false);
    expect(isProductionValue('env', 'staging')).toBe(false);
  });

  it('summarizes a request in one line and names the argument that tells duplicates apart', () => {
    expect(summarize(base)).toBe('deployer → deploy_serving (model_id m-42, env prod)');
    const twin = { ...base, id: 'apr_2', arguments: { model_id: 'm-43', env: 'prod' } } as Approval;
    const other = { ...base, id: 'apr_3', tool: 'promote_challenger' } as Approval;
    const d = distinguishers([base, twin, other]);
    expect(d.get('apr_1')).toBe('model_id m-42');
    expect(d.get('apr_2')).toBe('model_id m-43');
    expect(d.has('apr_3')).toBe(false);
  });

  it('rephrases the gate reason without ids', () => {
    expect(plainReason({ ...base, reason: 'Waiting for an operator (approval apr_x).' })).toBe('Waiting for an operator.');
    expect(plainReason(base)).toBe('Every deploy_serving call needs a person to approve it first (the “deploy” gate).');
  });

  it('says which approval of a two-person gate this one would be', () => {
    expect(approvalStep(base)).toBeNull();
    const two = { ...base, approvals_required: 2 } as Approval;
    expect(approvalStep(two)).toMatchObject({ completes: false, text: expect.stringContaining('approval 1 of 2') });
    const second = { ...two, approvals: [{ by: 'olivia', role: 'operator', at: 1, reason: null }] } as Approval;
    expect(approvalStep(second)).toMatchObject({ completes: true, text: expect.stringContaining('first approval by olivia') });
  });
});
