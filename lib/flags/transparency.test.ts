import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { FLAG_CATALOG } from './catalog';
import { flagHistoryQuerySchema } from './query';
import { describeMatch, transparencyReport } from './transparency';

const POLICY = `
rules:
  - id: no-pii-export
    decision: DENY
    priority: 950
    reason: Exports with personal data are never allowed.
    match:
      tool: export_raw_data
      arguments: { contains_pii: true }
  - id: read-only-flags
    decision: deny
    match:
      method: [PUT, DELETE]
      path: /api/v1/flags/*
      role: [viewer, auditor]
`;

const q = (raw: Record<string, string> = {}) => flagHistoryQuerySchema.parse(raw);

describe('the transparency report', () => {
  let t: TempApp | undefined;
  afterEach(() => {
    t?.cleanup();
    t = undefined;
  });

  it('lists every catalog flag once, grouped by tier in the order invariant, flag, experiment', async () => {
    t = tempApp();
    const r = (await transparencyReport(t.app, q()));
    expect(r.tiers.map((g) => g.tier)).toEqual(['invariant', 'flag', 'experiment']);
    const names = r.tiers.flatMap((g) => g.flags.map((f) => f.name));
    expect(names.sort()).toEqual(FLAG_CATALOG.map((f) => f.name).sort());
    for (const g of r.tiers) expect(g.flags.every((f) => f.tier === g.tier)).toBe(true);
    expect(r.summary).toMatchObject({ flags: FLAG_CATALOG.length, overridden: 0, problems: 0 });
  });

  it('gives each flag its value, layer, description, owner, guards and last change', async () => {
    t = tempApp();
    await t.app.flags.setOverride('auto_fairness_audit', false, 'ada', 'audit tool broken, ticket 12');
    const flags = (await transparencyReport(t.app, q())).tiers.flatMap((g) => g.flags);
    const fairness = flags.find((f) => f.name === 'auto_fairness_audit')!;
    expect(fairness).toMatchObject({
      tier: 'flag',
      value: false,
      layer: 'override',
      owner: 'responsible-ai',
      guards: { tools: ['fairness_audit'], paths: [] },
      override: { value: false, set_by: 'ada', reason: 'audit tool broken, ticket 12' },
      last_change: { action: 'set', layer: 'override', old_value: true, new_value: false, changed_by: 'ada', reason: 'audit tool broken, ticket 12' },
    });
    expect(fairness.description.length).toBeGreaterThan(20);
    expect(flags.find((f) => f.name === 'cron_scheduler')).toMatchObject({ layer: 'default', override: null, last_change: null });
  });

  it('keeps the last change after an override is removed, while the layer falls back', async () => {
    t = tempApp({ env: { SWARM_FLAG_BATCH_RUNNER: 'off' } });
    await t.app.flags.setOverride('batch_runner', true, 'ada', 'backfill tonight');
    await t.app.flags.unsetOverride('batch_runner', 'grace', 'backfill done');
    const batch = (await transparencyReport(t.app, q())).tiers[1]!.flags.find((f) => f.name === 'batch_runner')!;
    expect(batch).toMatchObject({ value: false, layer: 'env', variable: 'SWARM_FLAG_BATCH_RUNNER', override: null });
    expect(batch.last_change).toMatchObject({ action: 'unset', old_value: true, new_value: false, changed_by: 'grace' });
  });

  it('reports the problems of the environment with their kind', async () => {
    t = tempApp({ env: { SWARM_FLAG_NOT_A_FLAG: '1', SWARM_FLAG_BATCH_RUNNER: 'maybe', SWARM_FLAG_AUDIT_TRAIL_SECURITY_EVENTS: 'off' } });
    const r = (await transparencyReport(t.app, q()));
    expect(r.problems.map((p) => [p.kind, p.variable])).toEqual([
      ['unknown_flag', 'SWARM_FLAG_NOT_A_FLAG'],
      ['invariant_refused', 'SWARM_FLAG_AUDIT_TRAIL_SECURITY_EVENTS'],
      ['not_boolean', 'SWARM_FLAG_BATCH_RUNNER'],
    ]);
    expect(r.summary.problems).toBe(3);
    expect(r.tiers[0]!.flags[0]).toMatchObject({ name: 'audit_trail_security_events', value: true, layer: 'default' });
  });

  it('lists the registered sources in engine order, and the policy rules with what they match', async () => {
    t = tempApp({ policy: POLICY });
    const { sources } = (await transparencyReport(t.app, q()));
    expect(sources.registered.map((s) => [s.name, s.built_in])).toEqual([
      ['rbac', true],
      ['agent_allowlist', true],
      ['feature_flags', true],
      ['policy', true],
      ['hitl', true],
      ['mcp_pins', true],
    ]);
    expect(sources.policy.file).toMatchObject({ path: t.policyPath, error: null, missing: false });
    expect(sources.policy.file.loaded_at).toBeGreaterThan(0);
    expect(sources.policy.rules).toEqual([
      expect.objectContaining({
        id: 'no-pii-export',
        rule_source: 'policy:no-pii-export',
        decision: 'DENY',
        priority: 950,
        applies_to: 'tool calls',
        conditions: ['tool is export_raw_data', 'argument contains_pii is true'],
      }),
      expect.objectContaining({
        id: 'read-only-flags',
        decision: 'DENY',
        priority: 500,
        applies_to: 'HTTP requests',
        conditions: ['role is viewer or auditor', 'method is PUT or DELETE', 'path is /api/v1/flags/*'],
        reason: null,
      }),
    ]);
  });

  it('shows the error that kept the last good policy in force', async () => {
    t = tempApp({ policy: POLICY });
    writeFileSync(t.policyPath, 'rules:\n  - id: broken\n    decision: MAYBE\n');
    t.app.policyFile.reload(true);
    const { policy } = (await transparencyReport(t.app, q())).sources;
    expect(policy.file.error).toMatch(/decision must be ALLOW, DENY or ASK[\s\S]*last good version stays in force/);
    expect(policy.rules.map((r) => r.id)).toEqual(['no-pii-export', 'read-only-flags']);
  });

  it('lists the agents with their allowlists, and marks a plugin source as such', async () => {
    t = tempApp();
    t.app.engine.registerSource({ name: 'ticket_check', rules: () => [] });
    {
      const { sources } = (await transparencyReport(t.app, q()));
      expect(sources.agents.agents.find((a) => a.name === 'evaluator')).toEqual({
        name: 'evaluator',
        owner: null,
        description: null,
        tools: ['evaluate_model', 'fairness_audit', 'grade_with_llm'],
      });
      expect(sources.registered.at(-1)).toMatchObject({ name: 'ticket_check', built_in: false, order: 7 });
    }
  });

  it('lists the gates in force with their condition, approvers, expiry, risk and where they were declared', async () => {
    t = tempApp({ gates: "gates:\n  - id: deploy\n    tools: [deploy_serving]\n    when: \"args.env == 'prod'\"\n    approvers: { count: 2 }\n    expires_in: 4h\n    risk: high\n    description: Customers see it.\n  - id: mail\n    tools: [send_*]\n  - id: destructive\n    annotations: { destructiveHint: true }\n  - id: github-writes\n    tools: ['github__*']\n    annotations: { readOnlyHint: false }\n" });
    const { gates } = (await transparencyReport(t.app, q())).sources;
    expect(gates.file.error).toBeNull();
    expect(gates.gates.find((g) => g.id === 'deploy')).toEqual({
      id: 'deploy',
      rule_source: 'hitl:deploy',
      tools: ['deploy_serving', 'promote_challenger'],
      annotations: null,
      when: "args.env == 'prod'",
      approvals_required: 2,
      approver_roles: ['operator', 'admin'],
      expires_in_seconds: 4 * 3600,
      risk: 'high',
      description: 'Customers see it.',
      declared_in: 'code, configured in gates.yaml',
    });
    expect(gates.gates.find((g) => g.id === 'export')).toMatchObject({ declared_in: 'code', when: null, approvals_required: 1 });
    expect(gates.gates.find((g) => g.id === 'mail')).toMatchObject({ declared_in: 'gates.yaml', tools: ['send_*'], risk: 'medium' });
    // a gate by MCP annotations, alone or beside tools, says which annotations it covers
    expect(gates.gates.find((g) => g.id === 'destructive')).toMatchObject({ tools: [], annotations: 'destructiveHint' });
    expect(gates.gates.find((g) => g.id === 'github-writes')).toMatchObject({ tools: ['github__*'], annotations: 'not readOnlyHint' });
  });

  it('filters the history by flag and by who, and pages it', async () => {
    t = tempApp();
    for (let i = 0; i < 5; i++) await t.app.flags.setOverride('batch_runner', i % 2 === 1, i < 3 ? 'ada' : 'grace', `change ${i}`);
    await t.app.flags.setOverride('cron_scheduler', false, 'grace', 'maintenance');
    const h = async (raw: Record<string, string>) => (await transparencyReport(t!.app, q(raw))).history;
    expect((await h({ name: 'batch_runner' })).changes.map((c) => c.reason)).toEqual(['change 4', 'change 3', 'change 2', 'change 1', 'change 0']);
    expect((await h({ by: 'grace' })).changes.map((c) => c.reason)).toEqual(['maintenance', 'change 4', 'change 3']);
    expect(await h({ name: 'batch_runner', by: 'ada' })).toMatchObject({ filter: { name: 'batch_runner', by: 'ada' }, next_cursor: null });
    const first = await h({ limit: '4' });
    expect(first.changes).toHaveLength(4);
    expect(first.next_cursor).not.toBeNull();
    const second = await h({ limit: '4', before: first.next_cursor! });
    expect(second.changes.map((c) => c.reason)).toEqual(['change 1', 'change 0']);
    expect(second.next_cursor).toBeNull();
    expect((await h({})).options).toEqual({ names: ['cron_scheduler', 'batch_runner'], by: ['ada', 'grace'] });
  });
});

describe('the history filter from a URL', () => {
  it('treats blank parameters as no filter, as a blank form field sends them', async () => {
    expect(flagHistoryQuerySchema.parse({ name: '', by: ' ', before: '' })).toEqual({ limit: 100 });
  });

  it('accepts a flag that is no longer in the catalog, and refuses what is not a flag name or a cursor', async () => {
    expect(flagHistoryQuerySchema.parse({ name: 'retired_experiment' }).name).toBe('retired_experiment');
    expect(flagHistoryQuerySchema.safeParse({ name: 'DROP TABLE' }).success).toBe(false);
    expect(flagHistoryQuerySchema.safeParse({ before: 'yesterday' }).success).toBe(false);
    expect(flagHistoryQuerySchema.safeParse({ limit: '0' }).success).toBe(false);
    expect(flagHistoryQuerySchema.safeParse({ who: 'ada' }).success).toBe(false);
  });
});

describe('a policy rule in words', () => {
  it('says what every condition matches, and that a rule without conditions matches everything', async () => {
    expect(describeMatch({ agent: ['a', 'b', 'c'], tool: 'deploy_*', arguments: { env: ['prod', 'staging'], dry_run: false } })).toEqual([
      'agent is a, b or c',
      'tool is deploy_*',
      'argument env is prod or staging',
      'argument dry_run is false',
    ]);
    expect(describeMatch({})).toEqual(['every tool call and every HTTP request']);
  });

  it('says which MCP annotations a rule requires', () => {
    expect(describeMatch({ tool: 'github__*', annotations: { destructiveHint: true, openWorldHint: false } })).toEqual([
      'tool is github__*',
      'annotations: destructiveHint and not openWorldHint',
    ]);
  });
});
