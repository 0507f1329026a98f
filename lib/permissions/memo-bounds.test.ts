/**
 * Bounded memory (issue 23): every memo of the engine keyed by names from requests (agents, tools) stays within its
 * bound under a spray of unique names, and the answers it gives after forgetting are the right ones.
 */
import { describe, expect, it } from 'vitest';
import { PermissionEngine } from './engine';
import { gateOfTool, MAX_GATE_MEMO, mergeGates, type GateSpec } from './gates';
import { candidateRules, MAX_CANDIDATE_ENTRIES, parsePolicy } from './policy';
import { createAgentAllowlistSource, createHitlSource, createPolicySource, createRbacSource, type AgentDirectory } from './sources';
import { MAX_ALLOWLIST_MEMO } from './sources/agent-allowlist';
import { MAX_FIRST_ASKS } from './sources/hitl';
import { MAX_PLANS } from './sources/policy';
import type { CheckInput, PermissionContext, Principal } from './types';

const admin: Principal = { kind: 'user', id: 'admin', role: 'admin' };
const NO_FLAGS = new Map<string, boolean>();
const call = (agent: string, tool: string, args: Record<string, unknown> = {}): CheckInput => ({ kind: 'tool', principal: admin, agent, tool, arguments: args });
const contextOf = (agent: string, tool: string, extra: Partial<PermissionContext> = {}): PermissionContext =>
  ({ ...call(agent, tool), flags: NO_FLAGS, ...extra }) as PermissionContext;

const directory: AgentDirectory = {
  agents: new Map([
    ['data_cleaner', { tools: new Set(['profile_dataset', 'clean_dataset']) }],
    ['deployer', { tools: new Set(['deploy_serving']) }],
  ]),
};

const POLICY = `
rules:
  - id: no-raw-exports
    decision: DENY
    match: { tool: export_raw_data }
  - id: etl-agents-read
    decision: ALLOW
    match: { agent: "etl_*", tool: "read_*" }
  - id: prod-deploys-ask
    decision: ASK
    match: { tool: deploy_serving, arguments: { env: prod } }
`;

const deployGate: GateSpec = {
  id: 'deploy',
  tools: ['deploy_*'],
  approvers: { roles: ['operator', 'admin'], count: 1 },
  expiresInSeconds: 3600,
  risk: 'high',
  origin: 'code',
};

describe('the agent allowlist memo', () => {
  it('holds at most its bound under 10,000 unique agent names, and still answers every call right', () => {
    const source = createAgentAllowlistSource(() => directory, { maxMemo: 64 });
    const before = source.rules(contextOf('data_cleaner', 'profile_dataset'));
    expect(before[0]).toMatchObject({ decision: 'ALLOW' });
    for (let i = 0; i < 10_000; i++) {
      const rules = source.rules(contextOf(`sprayed-${i}`, 'profile_dataset'));
      expect(rules[0]).toMatchObject({ decision: 'DENY', reason: `Unknown agent "sprayed-${i}": it is not declared in config/agents.yaml.` });
      expect(source.memoSize()).toBeLessThanOrEqual(64);
    }
    // long forgotten: built again, with the same answer
    expect(source.rules(contextOf('data_cleaner', 'profile_dataset'))).toEqual(before);
    expect(source.rules(contextOf('data_cleaner', 'train_model'))[0]).toMatchObject({ decision: 'DENY', reason: 'Tool "train_model" is not in the allowlist of agent "data_cleaner".' });
    expect(source.rules(contextOf('sprayed-0', 'profile_dataset'))[0]).toMatchObject({ decision: 'DENY', reason: expect.stringContaining('"sprayed-0"') });
  });

  it('keeps no more than MAX_ALLOWLIST_MEMO answers with its own bound', () => {
    const source = createAgentAllowlistSource(() => directory);
    for (let i = 0; i < MAX_ALLOWLIST_MEMO + 5_000; i++) source.rules(contextOf(`a${i}`, `t${i % 7}`));
    expect(source.memoSize()).toBeLessThanOrEqual(MAX_ALLOWLIST_MEMO);
    expect(source.memoSize()).toBeGreaterThanOrEqual(MAX_ALLOWLIST_MEMO / 2);
  });

  it('does not mistake one (agent, tool) pair for another whose names hold the separator', () => {
    const dir: AgentDirectory = { agents: new Map([['a', { tools: new Set(['b\u0000c']) }]]) };
    const source = createAgentAllowlistSource(() => dir);
    expect(source.rules(contextOf('a', 'b\u0000c'))[0]).toMatchObject({ decision: 'ALLOW' });
    expect(source.rules(contextOf('a\u0000b', 'c'))[0]).toMatchObject({ decision: 'DENY' });
  });
});

describe('the policy memos', () => {
  it('plans at most their bound under 10,000 unique agent names, and the rules still match after eviction', () => {
    const policy = parsePolicy(POLICY);
    const source = createPolicySource(() => policy, { maxMemo: 64 });
    const ids = (agent: string, tool: string, args: Record<string, unknown> = {}) => source.rules({ ...contextOf(agent, tool), arguments: args }).map((r) => r.attribution.id);
    expect(ids('etl_sales', 'read_table')).toEqual(['etl-agents-read']);
    for (let i = 0; i < 10_000; i++) {
      expect(ids(`sprayed-${i}`, 'export_raw_data')).toEqual(['no-raw-exports']);
      expect(source.memoSize()).toBeLessThanOrEqual(64);
    }
    expect(ids('etl_sales', 'read_table')).toEqual(['etl-agents-read']);
    expect(ids('ml_team', 'read_table')).toEqual([]);
    expect(ids('deployer', 'deploy_serving', { env: 'prod' })).toEqual(['prod-deploys-ask']);
    expect(ids('deployer', 'deploy_serving', { env: 'staging' })).toEqual([]);
  });

  it('keeps no more than MAX_PLANS plans and MAX_CANDIDATE_ENTRIES candidate lists with their own bounds', () => {
    const policy = parsePolicy(POLICY);
    const source = createPolicySource(() => policy);
    const n = Math.max(MAX_PLANS, MAX_CANDIDATE_ENTRIES) + 5_000;
    for (let i = 0; i < n; i++) source.rules(contextOf(`etl_${i}`, 'read_x'));
    expect(source.memoSize()).toBeLessThanOrEqual(MAX_PLANS);
    expect(policy.candidates.size).toBeLessThanOrEqual(MAX_CANDIDATE_ENTRIES);
    // the first pairs were forgotten; computed again, they match as before
    expect(candidateRules(policy, 'read_x', 'etl_0').map((r) => r.id)).toEqual(['etl-agents-read']);
    expect(candidateRules(policy, 'read_x', 'other_0').map((r) => r.id)).toEqual([]);
  });
});

describe('the gate memos', () => {
  it('remember the gate of at most MAX_GATE_MEMO tools, and still find it after forgetting', () => {
    const set = mergeGates([deployGate], []);
    expect(gateOfTool(set, 'deploy_serving')?.id).toBe('deploy');
    for (let i = 0; i < MAX_GATE_MEMO + 5_000; i++) {
      gateOfTool(set, `tool-${i}`);
      if (i % 1_000 === 0) expect(set.byTool.size).toBeLessThanOrEqual(MAX_GATE_MEMO);
    }
    expect(set.byTool.size).toBeLessThanOrEqual(MAX_GATE_MEMO);
    expect(set.byTool.has('deploy_serving')).toBe(false);
    expect(gateOfTool(set, 'deploy_serving')?.id).toBe('deploy');
    expect(gateOfTool(set, 'tool-0')).toBeUndefined();
  });

  it('keep the first ASK of at most their bound of tools, and build it again for a forgotten tool', () => {
    const set = mergeGates([deployGate], []);
    const source = createHitlSource({ maxMemo: 32 });
    const ask = (tool: string) => source.rules(contextOf('deployer', tool, { gate: gateOfTool(set, tool), approval: { status: 'none' } }));
    const first = ask('deploy_serving');
    for (let i = 0; i < 2_000; i++) {
      expect(ask(`deploy_${i}`)[0]).toMatchObject({ decision: 'ASK', reason: `Tool "deploy_${i}" needs a human approval (gate "deploy").` });
      expect(source.memoSize()).toBeLessThanOrEqual(32);
    }
    expect(ask('deploy_serving')).toEqual(first);
    expect(createHitlSource().memoSize()).toBe(0);
    expect(MAX_FIRST_ASKS).toBeGreaterThan(32);
  });
});

describe('the engine under a spray of unique agent names', () => {
  it('keeps every memo within its bound and decides a known agent as before', () => {
    const policy = parsePolicy(POLICY);
    const gates = mergeGates([deployGate], []);
    const allowlist = createAgentAllowlistSource(() => directory);
    const policySource = createPolicySource(() => policy);
    const hitl = createHitlSource();
    const engine = new PermissionEngine({ sources: () => [createRbacSource(), allowlist, policySource, hitl], gates: () => gates, ports: { flagValues: () => NO_FLAGS } });
    expect(engine.check(call('data_cleaner', 'profile_dataset'))).toMatchObject({ decision: 'ALLOW', ruleSource: 'agent_allowlist' });
    const sprayed = MAX_ALLOWLIST_MEMO + MAX_PLANS + 1_000;
    for (let i = 0; i < sprayed; i++) {
      const r = engine.check(call(`agent-${i}`, i % 2 === 0 ? 'profile_dataset' : `tool-${i}`));
      if (r.decision !== 'DENY' || r.ruleSource !== 'agent_allowlist') throw new Error(`call ${i} was decided ${r.decision} ${r.ruleSource}`);
    }
    expect(allowlist.memoSize()).toBeLessThanOrEqual(MAX_ALLOWLIST_MEMO);
    expect(policySource.memoSize()).toBeLessThanOrEqual(MAX_PLANS);
    expect(policy.candidates.size).toBeLessThanOrEqual(MAX_CANDIDATE_ENTRIES);
    expect(gates.byTool.size).toBeLessThanOrEqual(MAX_GATE_MEMO);
    expect(engine.check(call('data_cleaner', 'profile_dataset'))).toMatchObject({ decision: 'ALLOW', ruleSource: 'agent_allowlist' });
    expect(engine.check(call('deployer', 'deploy_serving', { env: 'staging' }))).toMatchObject({ decision: 'ASK', ruleSource: 'hitl:deploy' });
    expect(engine.check(call('deployer', 'deploy_serving', { env: 'prod' }))).toMatchObject({ decision: 'ASK', ruleSource: 'policy:prod-deploys-ask' });
    expect(engine.check(call('agent-0', 'profile_dataset'))).toMatchObject({ decision: 'DENY', ruleSource: 'agent_allowlist' });
  });
});
