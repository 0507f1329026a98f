/**
 * Gates that hold (invariant hitl_gates): a gate is a requirement, not a rule in the contest. Each `it` against the
 * real application: real config files, a real SQLite database, the five default sources.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { untilPast } from '@/lib/test-support/wait';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApp } from '@/lib/app';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { ConfigFileError } from './yaml-config';
import { parseGates } from './gates';
import type { CheckInput, Principal } from './types';

const agentPrincipal = (agent: string): Principal => ({ kind: 'agent', id: agent, role: 'viewer', agent });
const call = (agent: string, tool: string, args: Record<string, unknown> = {}): CheckInput => ({
  kind: 'tool',
  principal: agentPrincipal(agent),
  agent,
  tool,
  arguments: args,
});
const deploy = (env: string, model = 'm-42') => call('deployer', 'deploy_serving', { model_id: model, env });
const olivia = { id: 'olivia', role: 'operator' } as const;
const oscar = { id: 'oscar', role: 'operator' } as const;

let t: TempApp | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});
const engine = () => t!.app.engine;

const STAGING_OK = `
rules:
  - id: staging-deploys-are-fine
    decision: ALLOW
    match: { tool: deploy_serving, arguments: { env: staging } }
`;

describe('a gate is a requirement, not a rule in the contest', () => {
  it('asks for a gated call that a YAML ALLOW at the default priority wins ("staging deploys are fine")', () => {
    t = tempApp({ policy: STAGING_OK });
    const r = engine().check(deploy('staging'));
    expect(r.decision).toBe('ASK');
    expect(r.ruleSource).toBe('hitl:deploy');
    // the trace keeps the ALLOW rule that would have run it
    expect(r.trace.find((x) => x.attribution.id === 'staging-deploys-are-fine')).toMatchObject({ decision: 'ALLOW', priority: 500 });
  });

  it('asks even when the ALLOW is a break-glass rule at any priority', () => {
    t = tempApp({ policy: 'rules:\n  - { id: open-all, decision: ALLOW, priority: 100000, match: { tool: deploy_serving } }\n' });
    expect(engine().check(deploy('prod'))).toMatchObject({ decision: 'ASK', ruleSource: 'hitl:deploy' });
  });

  it('lets a DENY win wherever it wins: nobody is asked about a call that is refused anyway', async () => {
    t = tempApp({ policy: STAGING_OK, env: { SWARM_FLAG_SERVING_DEPLOYMENTS: 'off' } });
    const r = engine().decide(deploy('staging'));
    expect(r).toMatchObject({ decision: 'DENY', ruleSource: 'flag:serving_deployments' });
    expect(await t.app.approvals.list({ status: 'pending' })).toHaveLength(0);
  });

  it('runs the allowed call once after an approval, then asks again', async () => {
    t = tempApp({ policy: STAGING_OK });
    const asked = engine().decide(deploy('staging'));
    expect(asked.decision).toBe('ASK');
    await t.app.approvals.approve(asked.approvalId!, olivia);
    const ran = engine().decide(deploy('staging'));
    expect(ran.decision).toBe('ALLOW');
    expect((await t.app.approvals.get(asked.approvalId!))!.status).toBe('consumed');
    expect(engine().decide(deploy('staging')).decision).toBe('ASK');
  });

  it('keeps a rejected call refused even when a YAML rule would allow it', async () => {
    t = tempApp({ policy: STAGING_OK });
    const asked = engine().decide(deploy('staging'));
    await t.app.approvals.reject(asked.approvalId!, olivia, 'Not this model');
    expect(engine().check(deploy('staging'))).toMatchObject({ decision: 'DENY', ruleSource: 'hitl:deploy' });
  });
});

describe('check() is pure', () => {
  it('records nothing and requests nothing, for a DENY and for an ASK', async () => {
    t = tempApp();
    expect(engine().check(call('data_cleaner', 'deploy_serving')).decision).toBe('DENY');
    expect(engine().check(deploy('prod')).decision).toBe('ASK');
    expect((await t.app.denials.query({})).rows).toHaveLength(0);
    expect(await t.app.approvals.list({})).toHaveLength(0);
  });

  it('reads a request past its expiry as expired without writing; the sweeper records it at the expiry time', async () => {
    t = tempApp();
    const asked = engine().decide(deploy('prod'));
    const row = (await t.app.approvals.get(asked.approvalId!))!;
    // make it due: a request whose gate expiry is one millisecond
    const { id } = await t.app.approvals.request({
      gate: 'deploy', agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-9', env: 'prod' },
      requestedBy: 'agent:deployer', ruleSource: 'hitl:deploy', reason: 'r', expiresInSeconds: 0.001,
    });
    await untilPast((await t.app.approvals.get(id))!.expiresAt);
    expect(engine().check(deploy('prod', 'm-9'))).toMatchObject({ decision: 'DENY', ruleSource: 'hitl:deploy' });
    expect((await t.app.approvals.get(id))!.status).toBe('pending');
    expect((await t.app.approvals.list({ status: 'pending' })).map((a) => a.id)).toEqual([row.id]);
    expect((await t.app.denials.query({})).rows).toHaveLength(0);

    expect(await t.app.approvals.expireDue()).toBe(1);
    const expired = (await t.app.approvals.get(id))!;
    expect(expired.status).toBe('expired');
    expect(expired.decidedAt).toBe(expired.expiresAt);
    const [denial] = (await t.app.denials.query({ ruleSource: 'hitl:deploy' })).rows;
    expect(denial!.timestamp).toBeCloseTo(expired.expiresAt, 3);
  });
});

describe('config/gates.yaml', () => {
  const PROD_MAIL = `
gates:
  - id: prod-drift
    tools: [monitor_*]
    when: "args.env == 'prod'"
    risk: low
    description: Drift checks on production read customer data.
`;

  it('gates a tool that no code declares, only where its condition holds', async () => {
    t = tempApp({ gates: PROD_MAIL });
    expect(engine().check(call('deployer', 'monitor_drift', { model_id: 'm', env: 'staging' }))).toMatchObject({ decision: 'ALLOW', ruleSource: 'agent_allowlist' });
    const prod = engine().decide(call('deployer', 'monitor_drift', { model_id: 'm', env: 'prod' }));
    expect(prod).toMatchObject({ decision: 'ASK', ruleSource: 'hitl:prod-drift' });
    expect(await t.app.approvals.get(prod.approvalId!)).toMatchObject({ gate: 'prod-drift', risk: 'low', gateDescription: 'Drift checks on production read customer data.' });
  });

  it('gates a call whose condition cannot be evaluated (a missing key): asking is the safe side', () => {
    t = tempApp({ gates: PROD_MAIL });
    expect(engine().check(call('deployer', 'monitor_drift', { model_id: 'm' })).decision).toBe('ASK');
  });

  it('configures a code gate with the same id: the file narrows deploy to prod and asks two people', async () => {
    t = tempApp({
      policy: STAGING_OK,
      gates: `gates:\n  - id: deploy\n    tools: [deploy_serving]\n    when: "args.env == 'prod'"\n    approvers: { roles: [operator, admin], count: 2 }\n    expires_in: 4h\n`,
    });
    expect(engine().check(deploy('staging'))).toMatchObject({ decision: 'ALLOW', ruleSource: 'policy:staging-deploys-are-fine' });
    const asked = engine().decide(deploy('prod'));
    const row = (await t.app.approvals.get(asked.approvalId!))!;
    expect(row).toMatchObject({ approvalsRequired: 2, gate: 'deploy' });
    expect(row.expiresAt - row.requestedAt).toBeCloseTo(4 * 3600, 0);
    // promote_challenger keeps its code gate (the code's tools are added to the file's), now with the file's condition
    expect(engine().check(call('deployer', 'promote_challenger', { model_id: 'm', env: 'prod' })).ruleSource).toBe('hitl:deploy');
    expect(engine().check(call('deployer', 'promote_challenger', { model_id: 'm', env: 'staging' })).ruleSource).toBe('agent_allowlist');
  });

  it('refuses a tool gated by two gates, at the line of the later one', () => {
    expect(() => parseGates('gates:\n  - id: a\n    tools: [send_*]\n  - id: b\n    tools: [send_email]\n', 'gates.yaml')).toThrow(
      /gates\.yaml:4:5: gates: tool "send_email" is gated by both "a" \(gates\.yaml:2:5\) and "b" \(gates\.yaml:4:5\)/,
    );
    expect(() => parseGates('gates:\n  - id: a\n    tools: [promote_*]\n  - id: b\n    tools: ["*"]\n', 'gates.yaml')).toThrow(/gated by both "a"/);
    t = tempApp();
    expect(() => parseGates('gates:\n  - id: release\n    tools: [deploy_serving]\n', 'gates.yaml', t!.app.codeGates)).toThrow(/gated by both "deploy" \(code\) and "release"/);
  });

  it('refuses a bad condition and a bad duration with file, line and column', () => {
    try {
      parseGates('gates:\n  - id: x\n    tools: [a]\n    when: "args.env =="\n    expires_in: soon\n', 'gates.yaml');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigFileError);
      const text = (e as Error).message;
      expect(text).toMatch(/gates\.yaml:4:11: gates\.0\.when: invalid condition: .*at character 12/);
      expect(text).toMatch(/gates\.yaml:5:17: gates\.0\.expires_in: "soon" is not a duration/);
    }
  });

  it('keeps the last good gates when a reload is malformed', () => {
    t = tempApp({ gates: PROD_MAIL });
    writeFileSync(t.gatesPath, 'gates:\n  - id: Bad Id\n');
    expect(t.app.gatesFile.reload(true)).toBe(false);
    expect(t.app.gatesFile.status().error).toMatch(/gates\.yaml:2:9/);
    expect(engine().check(call('deployer', 'monitor_drift', { model_id: 'm', env: 'prod' })).ruleSource).toBe('hitl:prod-drift');
  });
});

describe('the two-person rule', () => {
  const TWO = 'gates:\n  - id: deploy\n    tools: [deploy_serving]\n    approvers: { roles: [operator, admin], count: 2 }\n';

  it('stays pending after the first approval, and the same person cannot give the second', async () => {
    t = tempApp({ gates: TWO });
    const { approvalId } = engine().decide(deploy('prod'));
    const first = await t.app.approvals.approve(approvalId!, olivia);
    expect(first.status).toBe('pending');
    expect((await t.app.approvals.toJson([first]))[0]).toMatchObject({ approvals_required: 2, approvals: [{ by: 'olivia', role: 'operator' }] });
    expect(engine().decide(deploy('prod'))).toMatchObject({ decision: 'ASK', approvalId });
    await expect(t!.app.approvals.approve(approvalId!, olivia)).rejects.toThrow(/already gave approval 1 of 2/);
    await expect(t!.app.approvals.approve(approvalId!, { id: 'agent:deployer', role: 'operator' })).rejects.toThrow(/Separation of duties/);

    expect((await t.app.approvals.approve(approvalId!, oscar)).status).toBe('approved');
    expect(engine().decide(deploy('prod')).decision).toBe('ALLOW');
    expect(engine().decide(deploy('prod')).decision).toBe('ASK');
  });

  it('accepts only the roles the gate names', async () => {
    t = tempApp({ gates: 'gates:\n  - id: deploy\n    tools: [deploy_serving]\n    approvers: { roles: [admin] }\n' });
    const { approvalId } = engine().decide(deploy('prod'));
    await expect(t!.app.approvals.approve(approvalId!, olivia)).rejects.toThrow(/decided by admin; your role is operator/);
    expect((await t.app.approvals.approve(approvalId!, { id: 'ada', role: 'admin' })).status).toBe('approved');
  });
});

describe('conditions in policy', () => {
  const TRIALS = `
rules:
  - id: big-searches
    decision: DENY
    when: "args.trials >= 500"
    match: { tool: tune_hyperparameters }
  - id: reviewed-only
    decision: ALLOW
    priority: 950
    when: "args.reviewed == true"
    match: { tool: profile_dataset }
`;
  const tune = (trials: unknown) => call('trainer', 'tune_hyperparameters', trials === undefined ? { model_id: 'm' } : { model_id: 'm', trials });

  it('matches ranges, not only exact values: 750 and 500.5 are big, 499 is not', () => {
    t = tempApp({ policy: TRIALS, agents: 'agents:\n  trainer:\n    tools: [tune_hyperparameters]\n' });
    expect(engine().check(tune(750)).ruleSource).toBe('policy:big-searches');
    expect(engine().check(tune(500.5)).ruleSource).toBe('policy:big-searches');
    expect(engine().check(tune(499)).ruleSource).toBe('agent_allowlist');
  });

  it('falls on the safe side when a condition cannot be evaluated: a DENY applies, an ALLOW does not', () => {
    t = tempApp({ policy: TRIALS, agents: 'agents:\n  trainer:\n    tools: [tune_hyperparameters]\n' });
    expect(engine().check(tune(undefined)).ruleSource).toBe('policy:big-searches');
    expect(engine().check(call('trainer', 'profile_dataset', { dataset_id: 'd' })).ruleSource).toBe('agent_allowlist');
  });

  it('sees the principal, the flags and the time', () => {
    t = tempApp({
      policy: `rules:\n  - id: night\n    decision: DENY\n    when: "now.getHours() >= 22 && principal.kind == 'agent' && flags['batch_runner']"\n    match: { tool: profile_dataset }\n`,
    });
    const at = (iso: string) => ({ ...call('data_cleaner', 'profile_dataset', { dataset_id: 'd' }), now: Date.parse(iso) });
    expect(engine().check(at('2026-11-20T23:00:00Z')).ruleSource).toBe('policy:night');
    expect(engine().check(at('2026-11-20T12:00:00Z')).ruleSource).toBe('agent_allowlist');
  });

  it('refuses an unknown function at load, with file, line and column', () => {
    expect(() => tempApp({ policy: 'rules:\n  - id: x\n    decision: DENY\n    when: "frobnicate(args.x)"\n' })).toThrow(
      /permission_policies\.yaml:4:11: rules\.0\.when: invalid condition: .*frobnicate/,
    );
  });
});

describe('policy tests guard every reload', () => {
  const TESTS = 'tests:\n  - name: staging deploys ask\n    input: { agent: deployer, tool: deploy_serving, args: { model_id: m, env: staging } }\n    expect: { decision: ASK, rule_source: hitl:deploy }\n';

  it('refuses a gates.yaml whose tests fail: the last good gates stay, the failure is shown and recorded', async () => {
    t = tempApp({ tests: TESTS });
    writeFileSync(t.gatesPath, "gates:\n  - id: deploy\n    tools: [deploy_serving]\n    when: \"args.env == 'prod'\"\n");
    expect(t.app.gatesFile.reload(true)).toBe(false);
    expect(t.app.gatesFile.status().error).toMatch(/policy_tests\.yaml:2:5: policy test "staging deploys ask" failed: expected ASK hitl:deploy, got ALLOW agent_allowlist/);
    expect(engine().check(deploy('staging')).decision).toBe('ASK');
    const [event] = await t.app.securityEvents.ofType('config.refused');
    expect(event).toMatchObject({ outcome: 'refused', target: t.gatesPath });
    expect(event!.detailJson).toContain('staging deploys ask');
  });

  it('refuses a tests file that the configuration in force does not pass, and accepts one it passes', () => {
    t = tempApp({ tests: TESTS });
    const [file] = t.app.testFiles;
    writeFileSync(file!.path, TESTS.replace('decision: ASK', 'decision: ALLOW'));
    expect(file!.reload(true)).toBe(false);
    writeFileSync(file!.path, TESTS.replace('env: staging', 'env: prod'));
    expect(file!.reload(true)).toBe(true);
  });

  it('stops a server from starting on a configuration that fails its tests', () => {
    // tempApp does not enforce at start (CLI commands must still work while a policy is fixed); the server does:
    const t2 = tempApp({ tests: TESTS.replace('decision: ASK', 'decision: DENY') });
    try {
      expect(() => createApp({ dbPath: join(t2.dir, 'second.db'), configDir: t2.dir, env: {}, enforcePolicyTests: true })).toThrow(/policy test "staging deploys ask" failed/);
    } finally {
      t2.cleanup();
    }
  });
});

