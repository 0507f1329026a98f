/**
 * The examples of DESIGN.md section 2 ("What this ordering must give"), each against the real application:
 * real config files, a real SQLite database, the five default sources.
 */
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import {
  ApprovalRequired,
  PermissionDenied,
  PermissionEngine,
  type CheckInput,
  type Principal,
  type PluginRule,
  type ToolContext,
} from './index';

const agentPrincipal = (agent: string): Principal => ({ kind: 'agent', id: agent, role: 'viewer', agent });
const call = (agent: string, tool: string, args: Record<string, unknown> = {}): ToolContext => ({
  kind: 'tool',
  principal: agentPrincipal(agent),
  agent,
  tool,
  arguments: args,
});

let t: TempApp | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});

// The engine of the application under test (each temp app builds its own).
const engine = () => t!.app.engine;
const check = (input: CheckInput) => engine().check(input);
const decide = (input: CheckInput) => engine().decide(input);
const enforce = (input: CheckInput) => engine().enforce(input);

describe('the agent allowlist', () => {
  it('lets a listed tool run', () => {
    t = tempApp();
    const r = check(call('data_cleaner', 'profile_dataset', { dataset_id: 'd1' }));
    expect(r.decision).toBe('ALLOW');
    expect(r.ruleSource).toBe('agent_allowlist');
  });

  it('denies an unlisted tool, attributed to agent_allowlist, and records it', async () => {
    t = tempApp();
    expect(() => enforce(call('data_cleaner', 'deploy_serving', { model_id: 'm-1', env: 'prod' }))).toThrow(PermissionDenied);
    const rows = (await t.app.denials.query({ agent: 'data_cleaner' })).rows;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.ruleSource).toBe('agent_allowlist');
    expect(rows[0]!.toolName).toBe('deploy_serving');
  });

  it('denies an unknown agent', () => {
    t = tempApp();
    const r = check(call('rogue_agent', 'profile_dataset'));
    expect(r.decision).toBe('DENY');
    expect(r.ruleSource).toBe('agent_allowlist');
    expect(r.reason).toMatch(/Unknown agent "rogue_agent"/);
  });
});

describe('feature flags', () => {
  it('denies a listed tool whose flag is off, as flag:<name>', () => {
    t = tempApp({ env: { SWARM_FLAG_AUTO_FAIRNESS_AUDIT: 'off' } });
    const r = check(call('evaluator', 'fairness_audit', { model_id: 'm-1' }));
    expect(r.decision).toBe('DENY');
    expect(r.ruleSource).toBe('flag:auto_fairness_audit');
  });

  it('denies a gated tool whose flag is off (DENY beats ASK), instead of asking', async () => {
    t = tempApp({ env: { SWARM_FLAG_SERVING_DEPLOYMENTS: 'false' } });
    const r = decide(call('deployer', 'deploy_serving', { model_id: 'm-42', env: 'prod' }));
    expect(r.decision).toBe('DENY');
    expect(r.ruleSource).toBe('flag:serving_deployments');
    expect(await t.app.approvals.list({ status: 'pending' })).toHaveLength(0);
  });

  it('takes a runtime override into account at once', async () => {
    t = tempApp();
    expect(check(call('evaluator', 'fairness_audit', { model_id: 'm-1' })).decision).toBe('ALLOW');
    await t.app.flags.setOverride('auto_fairness_audit', false, 'admin', 'incident 42');
    expect(check(call('evaluator', 'fairness_audit', { model_id: 'm-1' })).ruleSource).toBe('flag:auto_fairness_audit');
  });
});

describe('HITL gates', () => {
  const deploy = () => call('deployer', 'deploy_serving', { model_id: 'm-42', env: 'prod' });

  it('asks for a listed, gated tool, then runs it exactly once after approval, then asks again', async () => {
    t = tempApp();
    let approvalId = '';
    try {
      enforce(deploy());
      expect.unreachable('a gated call must ask');
    } catch (e) {
      expect(e).toBeInstanceOf(ApprovalRequired);
      approvalId = (e as ApprovalRequired).approvalId;
      expect((e as ApprovalRequired).result.ruleSource).toBe('hitl:deploy');
    }
    expect(approvalId).toMatch(/^apr_/);
    // asking twice does not pile up requests
    expect(decide(deploy()).approvalId).toBe(approvalId);
    await t.app.approvals.approve(approvalId, { id: 'olivia', role: 'operator' });

    const first = enforce(deploy());
    expect(first.decision).toBe('ALLOW');
    expect(first.ruleSource).toBe('hitl:deploy');
    expect((await t.app.approvals.get(approvalId))!.status).toBe('consumed');

    const again = decide(deploy());
    expect(again.decision).toBe('ASK');
    expect(again.approvalId).not.toBe(approvalId);
  });

  it('binds an approval to the exact arguments: other arguments ask again', async () => {
    t = tempApp();
    const id = decide(deploy()).approvalId!;
    await t.app.approvals.approve(id, { id: 'olivia', role: 'operator' });
    const other = decide(call('deployer', 'deploy_serving', { model_id: 'm-43', env: 'prod' }));
    expect(other.decision).toBe('ASK');
    expect((await t.app.approvals.get(id))!.status).toBe('approved');
  });

  it('denies a rejected call as hitl:deploy and records the rejection as a denial', async () => {
    t = tempApp();
    const id = decide(deploy()).approvalId!;
    await t.app.approvals.reject(id, { id: 'olivia', role: 'operator' }, 'Model card incomplete');
    const rows = (await t.app.denials.query({ ruleSource: 'hitl' })).rows;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.reason).toContain('Model card incomplete');
    const r = decide(deploy());
    expect(r.decision).toBe('DENY');
    expect(r.ruleSource).toBe('hitl:deploy');
  });
});

describe('YAML policy', () => {
  const exceptions = `
rules:
  - id: deny-export
    decision: DENY
    reason: Raw exports are closed.
    match: { tool: export_raw_data }
  - id: allow-compliance-export
    decision: ALLOW
    match: { tool: export_raw_data, agent: compliance_agent }
`;

  it('lets an ALLOW beside a DENY of the same priority make an exception (and the export gate still asks)', () => {
    t = tempApp({ policy: exceptions });
    const compliance = check(call('compliance_agent', 'export_raw_data', { dataset_id: 'd' }));
    // The exception wins the policy tier; export_raw_data is gated, so the winning ALLOW becomes an ASK.
    expect(compliance.trace.find((r) => r.attribution.source === 'policy' && r.attribution.id === 'allow-compliance-export')?.decision).toBe('ALLOW');
    expect(compliance.decision).toBe('ASK');
    expect(compliance.ruleSource).toBe('hitl:export');
    const cleaner = check(call('data_cleaner', 'export_raw_data', { dataset_id: 'd' }));
    expect(cleaner.decision).toBe('DENY');
    expect(cleaner.ruleSource).toBe('policy:deny-export');
  });

  it('cannot re-open an unlisted tool or a flag kill switch with an ALLOW at the default priority', () => {
    t = tempApp({
      policy: `
rules:
  - { id: open-deploy, decision: ALLOW, match: { tool: deploy_serving } }
  - { id: open-grading, decision: ALLOW, match: { tool: grade_with_llm } }
`,
    });
    expect(check(call('data_cleaner', 'deploy_serving')).ruleSource).toBe('agent_allowlist');
    expect(check(call('evaluator', 'grade_with_llm')).ruleSource).toBe('flag:evaluator_grading');
  });

  it('cannot skip a gate: a YAML allow of a gated tool ("staging deploys are fine") still asks', () => {
    t = tempApp({ policy: 'rules:\n  - { id: staging-ok, decision: ALLOW, match: { tool: deploy_serving, arguments: { env: staging } } }\n' });
    const r = check(call('deployer', 'deploy_serving', { model_id: 'm-42', env: 'staging' }));
    expect(r.decision).toBe('ASK');
    expect(r.ruleSource).toBe('hitl:deploy');
    expect(r.trace.find((x) => x.attribution.id === 'staging-ok')?.decision).toBe('ALLOW');
  });

  it('re-opens both with an explicit break-glass ALLOW at priority 950', () => {
    t = tempApp({
      policy: `
rules:
  - { id: break-glass-deploy, decision: ALLOW, priority: 950, match: { tool: profile_dataset, agent: deployer } }
  - { id: break-glass-grading, decision: ALLOW, priority: 950, match: { tool: grade_with_llm } }
`,
    });
    const a = check(call('deployer', 'profile_dataset'));
    expect([a.decision, a.ruleSource]).toEqual(['ALLOW', 'policy:break-glass-deploy']);
    const b = check(call('evaluator', 'grade_with_llm'));
    expect([b.decision, b.ruleSource]).toEqual(['ALLOW', 'policy:break-glass-grading']);
  });

  it('matches top-level argument values', () => {
    t = tempApp({ policy: `rules:\n  - { id: no-prod, decision: DENY, match: { tool: deploy_serving, arguments: { env: prod } } }\n` });
    expect(check(call('deployer', 'deploy_serving', { model_id: 'm', env: 'prod' })).ruleSource).toBe('policy:no-prod');
    expect(check(call('deployer', 'deploy_serving', { model_id: 'm', env: 'staging' })).ruleSource).toBe('hitl:deploy');
  });
});

describe('RBAC on HTTP', () => {
  it('denies a role below the route requirement as rbac:<role>, and allows the role itself', () => {
    t = tempApp();
    const viewer: Principal = { kind: 'user', id: 'vic', role: 'viewer' };
    const admin: Principal = { kind: 'user', id: 'ada', role: 'admin' };
    const r = check({ kind: 'http', principal: viewer, method: 'PUT', path: '/api/v1/flags/x', requiredRole: 'admin' });
    expect([r.decision, r.ruleSource]).toEqual(['DENY', 'rbac:admin']);
    expect(check({ kind: 'http', principal: admin, method: 'PUT', path: '/api/v1/flags/x', requiredRole: 'admin' }).decision).toBe('ALLOW');
  });

  it('denies an agent token acting as another agent', () => {
    t = tempApp();
    const r = check({ ...call('data_cleaner', 'profile_dataset'), principal: agentPrincipal('trainer') });
    expect([r.decision, r.ruleSource]).toEqual(['DENY', 'rbac:agent_identity']);
  });
});

describe('the registry', () => {
  const constant = (name: string, rule: PluginRule) => ({ name, rules: () => [rule] });

  it('fails closed when a source throws, naming the source and the error', () => {
    t = tempApp();
    engine().registerSource({
      name: 'broken_plugin',
      rules: () => {
        throw new Error('lookup table missing');
      },
    });
    const r = check(call('data_cleaner', 'profile_dataset'));
    expect(r.decision).toBe('DENY');
    expect(r.ruleSource).toBe('broken_plugin:error');
    expect(r.reason).toContain('lookup table missing');
  });

  it('clears with resetSources and installs the defaults again lazily after markUninitialized', () => {
    t = tempApp();
    engine().resetSources();
    expect(check(call('data_cleaner', 'profile_dataset')).ruleSource).toBe('default');
    engine().registerSource(constant('plugin', { decision: 'ALLOW', priority: 1, id: 'always', reason: 'test' }));
    expect(check(call('data_cleaner', 'profile_dataset')).ruleSource).toBe('plugin:always');
    // Gates belong to the engine, not to a source: with the HITL source gone, a gated call still asks.
    expect(check(call('data_cleaner', 'deploy_serving'))).toMatchObject({ decision: 'ASK', ruleSource: 'hitl:deploy' });
    expect(engine().unregisterSource('plugin')).toBe(true);
    engine().markUninitialized();
    expect(check(call('data_cleaner', 'deploy_serving')).ruleSource).toBe('agent_allowlist');
  });

  it('refuses two sources of the same name', () => {
    const e = new PermissionEngine();
    e.registerSource(constant('a', { decision: 'ALLOW', priority: 1, reason: '' }));
    expect(() => e.registerSource(constant('a', { decision: 'ALLOW', priority: 1, reason: '' }))).toThrow(/already registered/);
  });

  it("attributes a plugin's rules to the plugin, and refuses a plugin that takes a built-in source's name", () => {
    t = tempApp();
    // A plugin that tries to speak for RBAC or the policy is refused before it can write a row in their name.
    for (const name of ['rbac', 'policy', 'hitl', 'csrf', 'default']) {
      expect(() => engine().registerSource(constant(name, { decision: 'DENY', priority: 999, reason: 'spoof' }))).toThrow(/built-in rule source/);
    }
    engine().registerSource(constant('weekend_freeze', { decision: 'DENY', priority: 850, reason: 'No deployments at weekends.' }));
    const r = check(call('data_cleaner', 'profile_dataset'));
    expect(r).toMatchObject({ decision: 'DENY', ruleSource: 'weekend_freeze', reason: 'No deployments at weekends.' });
    expect(r.rule.attribution).toEqual({ source: 'weekend_freeze' });
  });

  it('gives the same decision whatever the order of the sources', () => {
    const arbRule = fc.record({
      decision: fc.constantFrom('ALLOW' as const, 'DENY' as const, 'ASK' as const),
      priority: fc.integer({ min: 0, max: 1000 }),
      id: fc.constantFrom(undefined, 'x', 'y'),
      reason: fc.constant(''),
    });
    fc.assert(
      fc.property(fc.array(fc.array(arbRule, { maxLength: 4 }), { minLength: 1, maxLength: 6 }), fc.integer(), (perSource, seed) => {
        const sources = perSource.map((rules, i) => ({ name: `s${i}`, rules: () => rules }));
        const shuffled = [...sources].sort((x, y) => ((x.name.charCodeAt(1) * seed) % 7) - ((y.name.charCodeAt(1) * seed) % 7));
        const e1 = new PermissionEngine();
        const e2 = new PermissionEngine();
        sources.forEach((s) => e1.registerSource(s));
        shuffled.forEach((s) => e2.registerSource(s));
        const ctx = call('x', 'y');
        const r1 = e1.check(ctx);
        const r2 = e2.check(ctx);
        expect(r2.decision).toBe(r1.decision);
        expect(r2.rule).toEqual(r1.rule);
      }),
    );
  });
});
