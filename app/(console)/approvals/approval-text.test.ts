import { describe, expect, it } from 'vitest';
import { approvalStart, approvalStep, confirmsStep, deliberateStep, distinguishers, isProductionValue, plainReason, summarize, withPreset } from './approval-text';
import type { Approval } from './approval-types';

const base = {
  id: 'apr_1', gate: 'deploy', status: 'pending', outcome: 'waiting', agent: 'deployer', tool: 'deploy_serving',
  arguments: { model_id: 'm-42', env: 'prod' }, arguments_hash: 'h', tool_call_id: null, requested_by: 'agent:deployer',
  requested_at: 0, expires_at: 100, rule_source: 'hitl:deploy', reason: 'Tool "deploy_serving" needs a human approval (gate "deploy").',
  decided_by: null, decided_at: null, decision_reason: null, consumed_at: null, gate_description: null, risk: 'high',
  approvals_required: 1, approver_roles: ['operator', 'admin'], approvals: [], deciders: [],
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

describe('reject presets', () => {
  it('a preset goes in front of the written text, and a second one replaces the first', () => {
    expect(withPreset('', 'Wrong environment')).toBe('Wrong environment');
    expect(withPreset('use staging first', 'Wrong environment')).toBe('Wrong environment: use staging first');
    expect(withPreset('Wrong environment: use staging first', 'Not during a change freeze')).toBe('Not during a change freeze: use staging first');
    expect(withPreset('Wrong environment', 'The arguments look wrong')).toBe('The arguments look wrong');
    // a text that only starts like a preset, without its colon, is the person's own words
    expect(withPreset('Wrong environmental data', 'Wrong environment')).toBe('Wrong environment: Wrong environmental data');
  });
});

describe('the deliberate step of production and high-risk approvals', () => {
  const make = (over: Partial<Approval>): Approval => ({ ...(base as unknown as Approval), ...over });
  it('asks for the environment of a production call, the tool of a high-risk one, nothing for the rest', () => {
    expect(deliberateStep([make({ arguments: { model_id: 'm-1', env: 'prod' }, risk: 'medium' })])).toMatchObject({ word: 'prod' });
    expect(deliberateStep([make({ arguments: { env: 'staging' }, risk: 'high' })])).toMatchObject({ word: 'deploy_serving' });
    expect(deliberateStep([make({ arguments: { env: 'staging' }, risk: 'medium' })])).toBeNull();
    expect(deliberateStep([make({ arguments: { env: 'prod' } }), make({ arguments: { env: 'staging' }, risk: 'high' })])).toMatchObject({ word: 'approve all' });
    expect(deliberateStep([make({ arguments: { env: 'prod' } }), make({ arguments: { env: 'prod' }, id: 'apr_2' })])).toMatchObject({ word: 'prod' });
  });
  it('never starts on Approve: a word for production and high risk, a tick for medium risk, Cancel for the rest', () => {
    expect(approvalStart([make({ arguments: { env: 'prod' }, risk: 'low' })])).toMatchObject({ kind: 'word', word: 'prod' });
    expect(approvalStart([make({ arguments: { to: 'model-risk@partner-insurer.example' }, tool: 'send_email', risk: 'medium' })])).toEqual({ kind: 'tick', why: 'send_email is a medium-risk call' });
    expect(approvalStart([make({ arguments: { env: 'staging' }, risk: 'low' }), make({ id: 'apr_2', arguments: { env: 'staging' }, risk: 'medium' })])).toMatchObject({ kind: 'tick' });
    expect(approvalStart([make({ arguments: { env: 'staging' }, risk: 'low' })])).toEqual({ kind: 'cancel' });
  });
  it('is confirmed only by the word itself', () => {
    expect(confirmsStep(' PROD ', 'prod')).toBe(true);
    expect(confirmsStep('', 'prod')).toBe(false);
    expect(confirmsStep('pro', 'prod')).toBe(false);
    expect(confirmsStep('prod!', 'prod')).toBe(false);
  });
});
