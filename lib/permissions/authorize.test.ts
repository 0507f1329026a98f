/**
 * The engine's semantics as a table: each case a sentence, a call, the facts known of it, and the decision and rule
 * it must get from `authorize` — no database, no application, no engine object; one configuration of the five sources
 * (agents, flags, policy, gates, RBAC) written as the files are, plus a source that breaks.
 */
import { describe, expect, it } from 'vitest';
import { builtInSources, DEFAULT_FLAG_VALUES } from '@/lib/config/sources';
import { parseAgents } from '@/lib/config/agents';
import { authorize, type CallFacts } from './authorize';
import { parseGates } from './gates';
import { parsePolicy } from './policy';
import type { ApprovalState, CheckInput, Decision, Principal, RuleSource, ToolAnnotations } from './types';

const agents = parseAgents(`agents:
  analyst:
    tools: [read_table, export_report, send_email, drop_table]
  deployer:
    tools: [deploy_serving, rollback_serving]
  mcp-desk:
    tools: [files__read, files__delete]
`);
const policy = parsePolicy(`rules:
  - id: no-prod-exports
    decision: DENY
    priority: 950
    reason: Production data is not exported by agents.
    when: "args.env == 'prod'"
    match: { tool: export_report }
  - id: never-drop
    decision: DENY
    priority: 900
    reason: Tables are not dropped by agents.
    match: { tool: drop_table }
  - id: drop-allowed-low
    decision: ALLOW
    priority: 100
    match: { tool: drop_table }
  - id: tie-ask
    decision: ASK
    priority: 500
    match: { tool: read_table, arguments: { table: salaries } }
  - id: tie-allow
    decision: ALLOW
    priority: 500
    match: { tool: read_table, arguments: { table: salaries } }
  - id: secrets-ask
    decision: ASK
    priority: 500
    match: { tool: read_table, arguments: { table: secrets } }
  - id: secrets-deny
    decision: DENY
    priority: 500
    match: { tool: read_table, arguments: { table: secrets } }
  - id: bob-reads-nothing
    decision: DENY
    priority: 800
    when: "principal.on_behalf_of == 'bob'"
    match: { tool: read_table }
  - id: admins-only-settings
    decision: DENY
    priority: 600
    reason: Settings are for administrators.
    match: { path: /api/v1/settings/*, role: [viewer, auditor, operator] }
  - id: mail-always-allowed
    decision: ALLOW
    priority: 10000
    match: { tool: send_email }
`);
const gates = parseGates(`gates:
  - id: deploy
    tools: [deploy_serving]
    when: "args.env == 'prod'"
  - id: external-mail
    tools: [send_email]
  - id: destructive
    annotations: { destructiveHint: true }
`);

const snapshot = (flags: Record<string, boolean> = {}, extra: RuleSource[] = []) => {
  const values = new Map(DEFAULT_FLAG_VALUES);
  for (const [k, v] of Object.entries(flags)) values.set(k, v);
  return { sources: [...builtInSources(() => agents, () => policy), ...extra], gates, flags: values };
};

const agent = (name: string, extra: Partial<Principal> = {}): Principal => ({ kind: 'agent', id: name, role: 'viewer', agent: name, scopes: ['decide'], ...extra });
const user = (name: string, role: Principal['role']): Principal => ({ kind: 'user', id: name, role });
const ANON: Principal = { kind: 'anonymous', id: 'anonymous', role: 'anonymous' };

const tool = (agentName: string, name: string, args: Record<string, unknown> = {}, more: { principal?: Principal; annotations?: ToolAnnotations } = {}): CheckInput => ({
  kind: 'tool',
  principal: more.principal ?? agent(agentName),
  agent: agentName,
  tool: name,
  arguments: args,
  ...(more.annotations ? { annotations: more.annotations } : {}),
});
const http = (principal: Principal, method: string, path: string, more: Partial<Omit<Extract<CheckInput, { kind: 'http' }>, 'requiredRole'>> & { requiredRole?: Principal['role'] } = {}): CheckInput => ({ kind: 'http', principal, method, path, requiredRole: more.requiredRole ?? 'anonymous', ...more }) as CheckInput;
const approval = (status: ApprovalState['status']): CallFacts => ({ approval: { status, id: 'apr_table' } });

const broken: RuleSource = {
  name: 'broken',
  attributedTo: 'broken' as RuleSource['attributedTo'],
  rules: () => {
    throw new Error('its store is down');
  },
};

type Case = [sentence: string, input: CheckInput, expected: [Decision, string], facts?: CallFacts, flags?: Record<string, boolean>, extra?: RuleSource[]];

const CASES: Case[] = [
  ['an agent calls a tool of its allowlist: allowed by the allowlist', tool('analyst', 'read_table', { table: 'orders' }), ['ALLOW', 'agent_allowlist']],
  ['an agent calls a tool outside its allowlist: refused by the allowlist', tool('analyst', 'deploy_serving'), ['DENY', 'agent_allowlist']],
  ['an agent nobody declared: refused by the allowlist', tool('ghost', 'read_table', {}, { principal: agent('ghost') }), ['DENY', 'agent_allowlist']],
  ['a token of one agent naming another: refused by RBAC (agent identity)', tool('deployer', 'deploy_serving', {}, { principal: agent('analyst') }), ['DENY', 'rbac:agent_identity']],
  ['a policy DENY of higher priority beats the allowlist', tool('analyst', 'drop_table', { name: 'orders' }), ['DENY', 'policy:never-drop']],
  ['a conditional DENY applies when its condition holds', tool('analyst', 'export_report', { env: 'prod' }), ['DENY', 'policy:no-prod-exports']],
  ['a conditional DENY does not apply when its condition does not hold', tool('analyst', 'export_report', { env: 'staging' }), ['ALLOW', 'agent_allowlist']],
  ['at equal priority ALLOW wins over ASK (an exception beside a rule)', tool('analyst', 'read_table', { table: 'salaries' }), ['ALLOW', 'policy:tie-allow']],
  ['at equal priority DENY wins over ASK', tool('analyst', 'read_table', { table: 'secrets' }), ['DENY', 'policy:secrets-deny']],
  ['a condition on the person an agent acts for decides', tool('analyst', 'read_table', { table: 'orders' }, { principal: agent('analyst', { onBehalfOf: 'bob' }) }), ['DENY', 'policy:bob-reads-nothing']],
  ['the same call for another person is allowed', tool('analyst', 'read_table', { table: 'orders' }, { principal: agent('analyst', { onBehalfOf: 'alice' }) }), ['ALLOW', 'agent_allowlist']],
  ['a flag that is off refuses the tools it guards', tool('deployer', 'deploy_serving', { env: 'staging' }), ['DENY', 'flag:serving_deployments'], {}, { serving_deployments: false }],
  ['with the flag on, the same call is allowed', tool('deployer', 'deploy_serving', { env: 'staging' }), ['ALLOW', 'agent_allowlist']],
  ['a gate with a condition asks when it holds', tool('deployer', 'deploy_serving', { env: 'prod' }), ['ASK', 'hitl:deploy']],
  ['an approved, unused approval of this exact call lets it run', tool('deployer', 'deploy_serving', { env: 'prod' }), ['ALLOW', 'hitl:deploy'], approval('approved')],
  ['an approval does not open what a rule refuses', tool('deployer', 'deploy_serving', { env: 'prod' }), ['DENY', 'flag:serving_deployments'], approval('approved'), { serving_deployments: false }],
  ['a pending approval keeps it asking', tool('deployer', 'deploy_serving', { env: 'prod' }), ['ASK', 'hitl:deploy'], approval('pending')],
  ['a rejected approval refuses it', tool('deployer', 'deploy_serving', { env: 'prod' }), ['DENY', 'hitl:deploy'], approval('rejected')],
  ['an expired approval refuses it', tool('deployer', 'deploy_serving', { env: 'prod' }), ['DENY', 'hitl:deploy'], approval('expired')],
  ['an approval the trail does not hold is not used: the call asks again', tool('deployer', 'deploy_serving', { env: 'prod' }), ['ASK', 'hitl:deploy'], approval('unverified')],
  ['no policy rule turns a gated call into ALLOW, at any priority (hitl_gates)', tool('analyst', 'send_email', { to: 'x@example.com' }), ['ASK', 'hitl:external-mail']],
  ['a gate by annotations asks for a destructive MCP tool', tool('mcp-desk', 'files__delete', { path: '/a' }, { annotations: { destructiveHint: true } }), ['ASK', 'hitl:destructive']],
  ['the same tool declared read-only is not gated', tool('mcp-desk', 'files__delete', { path: '/a' }, { annotations: { readOnlyHint: true } }), ['ALLOW', 'agent_allowlist']],
  ['a source that breaks refuses the call at the top priority, naming itself', tool('analyst', 'read_table', { table: 'orders' }), ['DENY', 'broken:error'], {}, {}, [broken]],
  ['an HTTP request nobody restricts is allowed by default', http(user('vera', 'viewer'), 'GET', '/api/v1/permissions/denials'), ['ALLOW', 'default']],
  ['a role below the route\'s is refused by RBAC', http(user('vera', 'viewer'), 'POST', '/api/v1/approvals/x/approve', { requiredRole: 'operator' }), ['DENY', 'rbac:operator']],
  ['nobody signed in is refused by RBAC', http(ANON, 'GET', '/api/v1/permissions/denials', { requiredRole: 'viewer' }), ['DENY', 'rbac:viewer']],
  ['a token without the scope the route needs is refused by RBAC', http(agent('analyst'), 'GET', '/api/v1/permissions/denials', { requiredRole: 'viewer', requiredScope: 'read' }), ['DENY', 'rbac:scope']],
  ['a person on an agents-only route is refused by RBAC', http(user('olivia', 'operator'), 'POST', '/mcp', { requiredRole: 'viewer', requiredPrincipal: 'agent' }), ['DENY', 'rbac:agents_only']],
  ['a policy rule on paths and roles refuses an operator', http(user('olivia', 'operator'), 'GET', '/api/v1/settings/tokens'), ['DENY', 'policy:admins-only-settings']],
  ['the same path for an administrator is allowed', http(user('ada', 'admin'), 'GET', '/api/v1/settings/tokens'), ['ALLOW', 'default']],
  ['a session\'s state change from another origin is refused above every rule', http(user('ada', 'admin'), 'POST', '/api/v1/flags/x', { crossOrigin: true }), ['DENY', 'csrf:origin']],
];

describe('authorize: the decision as a table', () => {
  it.each(CASES)('%s', (_sentence, input, [decision, ruleSource], facts = {}, flags = {}, extra = []) => {
    const r = authorize(snapshot(flags, extra), input, facts);
    expect({ decision: r.decision, ruleSource: r.ruleSource }).toEqual({ decision, ruleSource });
    // the winning rule is in the trace (a gate's requirement too), and the reason is the winner's
    expect(r.reason).toBe(r.rule.reason);
  });

  it('is pure: the same question gets the same answer, and nothing it is given is changed', () => {
    const input = tool('deployer', 'deploy_serving', { env: 'prod', nested: { a: [1, 2] } });
    const before = JSON.stringify(input);
    const snap = snapshot();
    const first = authorize(snap, input, approval('pending'));
    const second = authorize(snap, input, approval('pending'));
    expect(second).toEqual(first);
    expect(JSON.stringify(input)).toBe(before);
  });

  it('names the approval it used or waits for, and the decision id it was given', () => {
    const input = tool('deployer', 'deploy_serving', { env: 'prod' });
    expect(authorize(snapshot(), input, { ...approval('approved'), decisionId: 'd-1' })).toMatchObject({ decision: 'ALLOW', approvalId: 'apr_table', decisionId: 'd-1' });
    expect(authorize(snapshot(), input, approval('pending')).approvalId).toBe('apr_table');
    // a call no approval was asked for names none
    expect(authorize(snapshot(), tool('analyst', 'read_table', { table: 'orders' })).approvalId).toBeUndefined();
  });

  it('refuses arguments that cannot be kept exactly before any source reads them', () => {
    const args = JSON.parse('{"__proto__": {"admin": true}}') as Record<string, unknown>;
    expect(() => authorize(snapshot(), tool('analyst', 'read_table', args))).toThrow(/__proto__/);
  });
});
