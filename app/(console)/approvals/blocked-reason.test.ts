import { describe, expect, it } from 'vitest';
import { normalize, type Approval } from './approval-types';
import { blockedReason } from './blocked-reason';

const request = (over: Partial<Approval> = {}): Approval =>
  normalize({
    id: 'apr_test0001',
    gate: 'deploy',
    status: 'pending',
    outcome: 'waiting',
    agent: 'deployer',
    tool: 'deploy_serving',
    arguments: { env: 'prod' },
    arguments_hash: 'h',
    tool_call_id: null,
    requested_by: 'agent:deployer',
    requested_at: 0,
    expires_at: 100,
    rule_source: 'hitl:deploy',
    reason: null,
    decided_by: null,
    decided_at: null,
    decision_reason: null,
    consumed_at: null,
    consumed_by: null,
    gate_description: null,
    client: null,
    risk: 'high',
    approvals_required: 1,
    approver_roles: ['operator', 'admin'],
    approvals: [],
    deciders: [],
    ...over,
  });

const olivia = { me: 'olivia', myRole: 'operator', mine: new Set<string>() };

describe('why an operator cannot approve a request', () => {
  it('lets an operator of the gate approve what someone else asked for', () => {
    expect(blockedReason(request(), olivia)).toBeNull();
  });

  it('refuses a second approval by the same person, said for a two-person gate', () => {
    const given = [{ by: 'olivia', role: 'operator', at: 1, reason: null }];
    expect(blockedReason(request({ approvals_required: 2, approvals: given }), olivia)).toBe('You gave the first approval; a second operator must approve it.');
    expect(blockedReason(request(), { ...olivia, mine: new Set(['apr_test0001']) })).toBe('You approved it already; another operator must approve it.');
  });

  it('refuses the requester and a role the gate does not take', () => {
    expect(blockedReason(request({ requested_by: 'olivia' }), olivia)).toBe('You requested this call; another operator must approve it.');
    expect(blockedReason(request({ approver_roles: ['admin'] }), olivia)).toBe('The “deploy” gate is approved by admin; your role is operator.');
  });

  it('names no role when the gate lists none, and a blank gate description is none', () => {
    expect(blockedReason(request({ approver_roles: [] }), olivia)).toBeNull();
    expect(request({ gate_description: '  ' }).gate_description).toBeNull();
  });
});
