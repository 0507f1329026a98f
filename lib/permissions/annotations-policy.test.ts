/**
 * Policy rules and gates that match MCP tool annotations (`match.annotations`, a gate's `annotations`, `tool_annotations`
 * in `when`), decided by a real engine with the five built-in sources over parsed configuration texts; the approval of
 * an annotation-gated call against the real application on a real SQLite file.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { agentDirectory, parseAgents } from '@/lib/config/agents';
import { builtInSources, DEFAULT_FLAG_VALUES } from '@/lib/config/sources';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { PermissionEngine, type ApprovalState, type CheckInput, type Principal, type ToolAnnotations } from './index';
import { parsePolicy } from './policy';
import { lintPolicy } from './policy-lint';
import { gatesOfCall, mergeGates, parseGates, type GateSpec } from './gates';
import { ConfigFileError } from './yaml-config';

const AGENTS = `
agents:
  coder:
    tools: [github__delete_repo, github__list_repos, github__create_issue, fs__read_file, fs__write_file, deploy_serving]
`;

const principal: Principal = { kind: 'agent', id: 'coder', role: 'viewer', agent: 'coder' };
const call = (tool: string, annotations?: ToolAnnotations, args: Record<string, unknown> = {}): CheckInput => ({
  kind: 'tool',
  principal,
  agent: 'coder',
  tool,
  arguments: args,
  ...(annotations ? { annotations } : {}),
});

function engineOf(config: { policy?: string; gates?: string; approval?: ApprovalState }): PermissionEngine {
  const agents = agentDirectory(parseAgents(AGENTS).file.agents);
  const policy = parsePolicy(config.policy ?? '', 'p.yaml');
  const gates = parseGates(config.gates ?? '', 'g.yaml');
  return new PermissionEngine({
    sources: () => builtInSources(() => agents, () => policy),
    gates: () => gates,
    ports: { flagValues: () => DEFAULT_FLAG_VALUES, approvalState: () => config.approval },
  });
}

const decisionOf = (e: PermissionEngine, input: CheckInput) => {
  const r = e.check(input);
  return `${r.decision} ${r.ruleSource}`;
};

const DESTRUCTIVE = { destructiveHint: true } as const;
const READ_ONLY = { readOnlyHint: true } as const;
const NOTHING_DECLARED = {} as const;

describe('match.annotations in policy rules', () => {
  const e = engineOf({
    policy: `
rules:
  - id: ask-destructive
    decision: ASK
    match: { annotations: { destructiveHint: true } }
  - id: no-open-world-writes
    decision: DENY
    priority: 950
    match: { tool: 'fs__*', annotations: { readOnlyHint: false, openWorldHint: true } }
`,
  });
  const cases: [string, CheckInput, string][] = [
    ['a tool that declares nothing is destructive: asks', call('github__delete_repo', NOTHING_DECLARED), 'ASK policy:ask-destructive'],
    ['a declared destructive tool asks', call('github__delete_repo', DESTRUCTIVE), 'ASK policy:ask-destructive'],
    ['a read-only tool with no destructiveHint is not destructive', call('github__list_repos', READ_ONLY), 'ALLOW agent_allowlist'],
    ['an additive tool is not destructive', call('github__create_issue', { destructiveHint: false }), 'ALLOW agent_allowlist'],
    ['the same tool name without annotations (not through the gateway) matches no annotations rule', call('github__delete_repo'), 'ALLOW agent_allowlist'],
    ['every listed hint must hold: an open-world writer is denied', call('fs__write_file', { destructiveHint: false }), 'DENY policy:no-open-world-writes'],
    ['every listed hint must hold: a closed-world writer is not', call('fs__write_file', { destructiveHint: false, openWorldHint: false }), 'ALLOW agent_allowlist'],
    ['the tool pattern still applies beside annotations', call('github__create_issue', { destructiveHint: false, openWorldHint: true }), 'ALLOW agent_allowlist'],
  ];
  it.each(cases)('%s', (_, input, expected) => {
    expect(decisionOf(e, input)).toBe(expected);
  });

  it('tests annotations per call, not per (tool, agent): the memo of one call never answers for another', () => {
    // The same tool and agent, alternating with and without annotations, in both orders.
    const seq: [ToolAnnotations | undefined, string][] = [
      [undefined, 'ALLOW agent_allowlist'],
      [NOTHING_DECLARED, 'ASK policy:ask-destructive'],
      [READ_ONLY, 'ALLOW agent_allowlist'],
      [undefined, 'ALLOW agent_allowlist'],
      [DESTRUCTIVE, 'ASK policy:ask-destructive'],
    ];
    for (const [annotations, expected] of seq) expect(decisionOf(e, call('github__delete_repo', annotations))).toBe(expected);
  });

  it('applies to tool calls only', () => {
    const p = parsePolicy('rules:\n  - { id: a, decision: DENY, match: { annotations: { readOnlyHint: false } } }\n');
    expect(p.rules[0]).toMatchObject({ appliesToTools: true, appliesToHttp: false });
    expect(p.http).toHaveLength(0);
    expect(p.askAnyTool).toBe(false);
  });

  it('marks an ASK rule by annotations as one that may ask for any tool (the engine then reads the approval state)', () => {
    expect(parsePolicy('rules:\n  - { id: a, decision: ASK, match: { annotations: { destructiveHint: true } } }\n').askAnyTool).toBe(true);
    const named = parsePolicy('rules:\n  - { id: a, decision: ASK, match: { tool: x, annotations: { destructiveHint: true } } }\n');
    expect([named.askAnyTool, [...named.askTools]]).toEqual([false, ['x']]);
  });

  it('refuses an unknown hint at the line and column where it is written', () => {
    const text = 'rules:\n  - id: a\n    decision: DENY\n    match:\n      annotations: { destructiveHint: true, destructive: true }\n';
    let error: unknown;
    try {
      parsePolicy(text, 'p.yaml');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigFileError);
    expect((error as ConfigFileError).issues[0]).toMatchObject({ line: 5, column: 45, path: 'rules.0.match.annotations' });
    expect((error as ConfigFileError).message).toMatch(/^p\.yaml:5:45: .*destructive/);
  });

  it.each([
    ['an empty requirement', '{}'],
    ['a hint that is not true or false', '{ readOnlyHint: yes please }'],
  ])('refuses %s', (_, value) => {
    expect(() => parsePolicy(`rules:\n  - id: a\n    decision: DENY\n    match: { annotations: ${value} }\n`, 'p.yaml')).toThrow(ConfigFileError);
  });

  it('sees tool_annotations in a rule condition, an empty map for a call without annotations', () => {
    const when = engineOf({
      policy: `
rules:
  - id: deny-open-world
    decision: DENY
    when: "has(tool_annotations.openWorldHint) && tool_annotations.openWorldHint"
`,
    });
    expect(decisionOf(when, call('fs__read_file', READ_ONLY))).toBe('DENY policy:deny-open-world');
    expect(decisionOf(when, call('fs__read_file', { readOnlyHint: true, openWorldHint: false }))).toBe('ALLOW agent_allowlist');
    expect(decisionOf(when, call('fs__read_file'))).toBe('ALLOW agent_allowlist');
  });

  it('lints by annotations as written: a rule covers another only if that one requires the same hints', () => {
    const p = parsePolicy(`
rules:
  - { id: wide, decision: DENY, priority: 900, match: { annotations: { destructiveHint: true } } }
  - { id: narrow, decision: ALLOW, match: { tool: x, annotations: { destructiveHint: true, openWorldHint: false } } }
  - { id: other, decision: ALLOW, match: { tool: x, annotations: { destructiveHint: false } } }
  - { id: plain, decision: ALLOW, match: { tool: x } }
`);
    expect(lintPolicy(p).map((w) => `${w.rule.id} by ${w.by.id}`)).toEqual(['narrow by wide']);
  });
});

const DESTRUCTIVE_GATE = `
gates:
  - id: destructive
    annotations: { destructiveHint: true }
    risk: high
    description: Every destructive tool of every MCP server needs a person's approval.
`;

describe('gates by annotations', () => {
  const e = engineOf({ gates: DESTRUCTIVE_GATE });
  const cases: [string, CheckInput, string][] = [
    ['asks for a destructive MCP call', call('github__delete_repo', DESTRUCTIVE), 'ASK hitl:destructive'],
    ['asks for a tool that declares nothing (destructive by default)', call('github__delete_repo', NOTHING_DECLARED), 'ASK hitl:destructive'],
    ['does not ask for the same tool name without annotations', call('github__delete_repo'), 'ALLOW agent_allowlist'],
    ['does not ask for a read-only tool', call('github__list_repos', READ_ONLY), 'ALLOW agent_allowlist'],
    ['does not ask for an additive tool', call('github__create_issue', { destructiveHint: false }), 'ALLOW agent_allowlist'],
  ];
  it.each(cases)('%s', (_, input, expected) => {
    expect(decisionOf(e, input)).toBe(expected);
  });

  it('is evaluated per call, not memoised by tool name', () => {
    for (const [annotations, expected] of [
      [undefined, 'ALLOW agent_allowlist'],
      [DESTRUCTIVE, 'ASK hitl:destructive'],
      [READ_ONLY, 'ALLOW agent_allowlist'],
      [NOTHING_DECLARED, 'ASK hitl:destructive'],
      [undefined, 'ALLOW agent_allowlist'],
    ] as const) {
      expect(decisionOf(e, call('github__delete_repo', annotations))).toBe(expected);
    }
  });

  it('allows an approved destructive call, and denies a rejected one', () => {
    expect(decisionOf(engineOf({ gates: DESTRUCTIVE_GATE, approval: { status: 'approved', id: 'apr_1' } }), call('github__delete_repo', {}))).toBe('ALLOW hitl:destructive');
    expect(decisionOf(engineOf({ gates: DESTRUCTIVE_GATE, approval: { status: 'rejected', id: 'apr_1' } }), call('github__delete_repo', {}))).toBe('DENY hitl:destructive');
  });

  const BOTH = `
gates:
  - id: deploy
    tools: [deploy_serving, github__delete_repo]
    when: "args.env == 'prod'"
  - id: github-writes
    tools: ['github__*']
    annotations: { readOnlyHint: false }
  - id: destructive
    annotations: { destructiveHint: true }
  - id: open-world
    annotations: { openWorldHint: true }
    when: "has(tool_annotations.idempotentHint) && !tool_annotations.idempotentHint"
`;
  it('tries the gate naming the tool first, then the gates by annotations in order; each with its annotations and condition', () => {
    // deploy and github-writes overlap by name (github__delete_repo): refused, see below. Without that overlap:
    const g = engineOf({ gates: BOTH.replace('deploy_serving, github__delete_repo', 'deploy_serving') });
    const cases: [CheckInput, string][] = [
      // a tool named by a gate with annotations: covered when they match
      [call('github__create_issue', { destructiveHint: false }), 'ASK hitl:github-writes'],
      [call('github__list_repos', READ_ONLY), 'ASK hitl:open-world'],
      [call('github__list_repos', { readOnlyHint: true, openWorldHint: false }), 'ALLOW agent_allowlist'],
      [call('github__create_issue'), 'ALLOW agent_allowlist'],
      // the named gate's condition does not hold: the gates by annotations still apply
      [call('deploy_serving', NOTHING_DECLARED, { env: 'staging' }), 'ASK hitl:destructive'],
      [call('deploy_serving', NOTHING_DECLARED, { env: 'prod' }), 'ASK hitl:deploy'],
      [call('deploy_serving', undefined, { env: 'staging' }), 'ALLOW agent_allowlist'],
      [call('deploy_serving', undefined, { env: 'prod' }), 'ASK hitl:deploy'],
      // not named: the first gate by annotations whose annotations and condition hold
      [call('fs__write_file', NOTHING_DECLARED), 'ASK hitl:destructive'],
      [call('fs__write_file', { destructiveHint: false }), 'ASK hitl:open-world'],
      [call('fs__write_file', { destructiveHint: false, idempotentHint: true }), 'ALLOW agent_allowlist'],
    ];
    for (const [input, expected] of cases) expect(decisionOf(g, input), JSON.stringify(input)).toBe(expected);
    expect(gatesOfCall(parseGates(BOTH.replace('deploy_serving, github__delete_repo', 'deploy_serving'), 'g.yaml'), 'github__list_repos', READ_ONLY).map((x) => x.id)).toEqual(['open-world']);
  });

  it('checks "a tool gated twice" by name only: gates by annotations alone never conflict, gates naming one tool do', () => {
    expect(() => parseGates(BOTH, 'g.yaml')).toThrow(/tool "github__delete_repo" is gated by both "deploy".*and "github-writes"/);
    const set = parseGates(`${DESTRUCTIVE_GATE}  - id: deploy\n    tools: [github__delete_repo]\n  - id: writes\n    annotations: { readOnlyHint: false }\n`, 'g.yaml');
    expect(set.gates.map((g) => g.id)).toEqual(['destructive', 'deploy', 'writes']);
    expect(set.byAnnotations.map((g) => g.id)).toEqual(['destructive', 'writes']);
  });

  it('refuses an unknown hint at the line and column where it is written', () => {
    let error: unknown;
    try {
      parseGates('gates:\n  - id: d\n    annotations:\n      destructiveHint: true\n      readOnly: false\n', 'gates.yaml');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigFileError);
    expect((error as ConfigFileError).issues[0]).toMatchObject({ line: 5, column: 7, path: 'gates.0.annotations' });
    expect(String(error)).toMatch(/gates\.yaml:5:7: .*readOnly/);
  });

  it('refuses a gate that names neither tools nor annotations', () => {
    expect(() => parseGates('gates:\n  - id: d\n    risk: high\n', 'gates.yaml')).toThrow(/gates\.yaml:2:5: .*tools.*annotations/);
  });

  it('refuses a gate spec (from code or a profile) that covers no tool instead of reading it as covering every call', () => {
    const none: GateSpec = { id: 'none', tools: [], approvers: { roles: ['operator'], count: 1 }, expiresInSeconds: 60, risk: 'high', origin: 'code' };
    expect(() => mergeGates([none], [])).toThrow(/gate "none" covers no tool/);
  });

  it('refuses a file entry that would add annotations to a gate declared in code (the code gate would stop covering other calls)', () => {
    const code: GateSpec = { id: 'deploy', tools: ['deploy_serving'], approvers: { roles: ['operator'], count: 1 }, expiresInSeconds: 60, risk: 'high', origin: 'code' };
    expect(() => parseGates('gates:\n  - id: deploy\n    annotations: { destructiveHint: true }\n', 'gates.yaml', [code])).toThrow(/gates\.yaml:2:5: .*declared in code.*cannot add annotations/);
    expect(mergeGates([code], []).gates[0]!.annotationMatcher).toBeUndefined();
  });
});

describe('an annotation-gated call against the real application (SQLite)', () => {
  let t: TempApp | undefined;
  afterEach(() => {
    t?.cleanup();
    t = undefined;
  });

  it('asks, records the request, runs once when approved, then asks again; the same tool without annotations never asks', async () => {
    t = tempApp({ agents: AGENTS, gates: DESTRUCTIVE_GATE });
    const engine = t.app.engine;
    const destructiveCall = call('github__delete_repo', NOTHING_DECLARED, { repo: 'acme/site' });
    const asked = engine.decide(destructiveCall);
    expect(asked).toMatchObject({ decision: 'ASK', ruleSource: 'hitl:destructive' });
    const request = await t.app.approvals.get(asked.approvalId!);
    expect(request).toMatchObject({ status: 'pending', gate: 'destructive', toolName: 'github__delete_repo' });
    await t.app.approvals.approve(asked.approvalId!, { id: 'olivia', role: 'operator' });
    expect(engine.decide(destructiveCall)).toMatchObject({ decision: 'ALLOW', ruleSource: 'hitl:destructive' });
    expect((await t.app.approvals.get(asked.approvalId!))!.status).toBe('consumed');
    expect(engine.decide(destructiveCall).decision).toBe('ASK');
    expect(engine.decide(call('github__delete_repo', undefined, { repo: 'acme/site' }))).toMatchObject({ decision: 'ALLOW', ruleSource: 'agent_allowlist' });
  });
});
