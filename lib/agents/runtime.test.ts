import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { untilPast } from '@/lib/test-support/wait';
import { z } from 'zod';
import { requireApproval } from '@/lib/approvals/gates';
import { ApprovalRequired, PermissionDenied } from '@/lib/permissions';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { DemoTeam, type TeamEvent } from './demo-team';
import { PLATFORM_TOOLS } from './platform-tools';
import { AgentRuntime } from './runtime';
import { tool } from './tool';

let t: TempApp | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});

describe('the agent runtime', () => {
  it('validates arguments with the tool schema before asking the engine', async () => {
    t = tempApp();
    const r = new AgentRuntime(t.app.decisions, t.app.approvals, 'deployer', PLATFORM_TOOLS);
    await expect(r.call('deploy_serving', { model_id: 'm', env: 'moon' })).rejects.toThrow(/not valid/);
    expect(await t.app.approvals.list()).toHaveLength(0);
    expect(await t.app.denials.count()).toBe(0);
  });

  it('runs an allowed call, throws PermissionDenied for a denied one', async () => {
    t = tempApp();
    const r = new AgentRuntime(t.app.decisions, t.app.approvals, 'deployer', PLATFORM_TOOLS);
    await expect(r.call('monitor_drift', { model_id: 'm' })).resolves.toMatchObject({ ok: true });
    await expect(r.call('train_model', { dataset_id: 'd', algorithm: 'x' })).rejects.toBeInstanceOf(PermissionDenied);
  });

  it('stores an asked call and re-runs it exactly once on the next turn after approval', async () => {
    t = tempApp();
    let runs = 0;
    const deploy = tool({ name: 'deploy_serving', schema: z.object({ model_id: z.string(), env: z.string() }), approval: requireApproval('deploy') }, () => ++runs);
    const r = new AgentRuntime(t.app.decisions, t.app.approvals, 'deployer', [deploy]);
    const asked = await r.call('deploy_serving', { model_id: 'm-42', env: 'prod' }).catch((e: unknown) => e);
    expect(asked).toBeInstanceOf(ApprovalRequired);
    expect(await r.resume()).toEqual([]);
    await t.app.approvals.approve((asked as ApprovalRequired).approvalId, { id: 'olivia', role: 'operator' });
    const outcomes = await r.resume();
    expect(outcomes).toEqual([{ approvalId: (asked as ApprovalRequired).approvalId, tool: 'deploy_serving', status: 'ran', result: 1 }]);
    expect(await r.resume()).toEqual([]);
    expect(runs).toBe(1);
  });

  it('reports a rejected call with its reason and never runs it', async () => {
    t = tempApp();
    const r = new AgentRuntime(t.app.decisions, t.app.approvals, 'deployer', PLATFORM_TOOLS);
    const asked = (await r.call('deploy_serving', { model_id: 'm', env: 'prod' }).catch((e: unknown) => e)) as ApprovalRequired;
    await t.app.approvals.reject(asked.approvalId, { id: 'olivia', role: 'operator' }, 'Drift too high');
    expect(await r.resume()).toEqual([{ approvalId: asked.approvalId, tool: 'deploy_serving', status: 'rejected', reason: 'Drift too high' }]);
  });
});

describe('a call with a secret argument', () => {
  it('runs once approved with the whole arguments this runtime asked with; a runtime that did not ask is told to call again', async () => {
    t = tempApp();
    const received: unknown[] = [];
    const deploy = tool({ name: 'deploy_serving', schema: z.object({ model_id: z.string(), env: z.string(), api_token: z.string() }), approval: requireApproval('deploy') }, (a) => received.push(a));
    const first = new AgentRuntime(t.app.decisions, t.app.approvals, 'deployer', [deploy]);
    const args = { model_id: 'm-s', env: 'prod', api_token: 'tok-0123456789-secret' };
    const asked = (await first.call('deploy_serving', args).catch((e: unknown) => e)) as ApprovalRequired;
    await t.app.approvals.approve(asked.approvalId, { id: 'olivia', role: 'operator' });
    // Another runtime of the agent (a restart): the store holds the call without its secret.
    expect(await new AgentRuntime(t.app.decisions, t.app.approvals, 'deployer', [deploy]).resume()).toEqual([
      { approvalId: asked.approvalId, tool: 'deploy_serving', status: 'call_again', reason: expect.stringMatching(/secret arguments are not stored/) },
    ]);
    expect(await first.resume()).toEqual([{ approvalId: asked.approvalId, tool: 'deploy_serving', status: 'ran', result: 1 }]);
    expect(received).toEqual([args]);
  });
});

describe('a runtime restarted after its calls were asked', () => {
  it('re-runs the approved call exactly once from the store, and reports the rejected and expired ones once', async () => {
    t = tempApp();
    let runs = 0;
    const deploy = tool({ name: 'deploy_serving', schema: z.object({ model_id: z.string(), env: z.string() }), approval: requireApproval('deploy') }, (a) => {
      runs++;
      return a.model_id;
    });
    const before = new AgentRuntime(t.app.decisions, t.app.approvals, 'deployer', [deploy]);
    const ask = async (model: string) => ((await before.call('deploy_serving', { model_id: model, env: 'prod' }).catch((e: unknown) => e)) as ApprovalRequired).approvalId;
    const approved = await ask('m-1');
    const rejected = await ask('m-2');
    const expiring = (await t.app.approvals.request({
      gate: 'deploy', agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-3', env: 'prod' },
      requestedBy: 'agent:deployer', ruleSource: 'hitl:deploy', reason: 'r', expiresInSeconds: 0.001,
    })).id;
    await t.app.approvals.approve(approved, { id: 'olivia', role: 'operator' });
    await t.app.approvals.reject(rejected, { id: 'olivia', role: 'operator' }, 'Wrong model');
    await untilPast((await t.app.approvals.get(expiring))!.expiresAt);

    // a new process: nothing in memory, only the store
    const after = new AgentRuntime(t.app.decisions, t.app.approvals, 'deployer', [deploy]);
    const outcomes = await after.resume();
    // oldest first; requests asked in the same millisecond come in an order of their own
    expect(outcomes).toHaveLength(3);
    expect(outcomes).toEqual(
      expect.arrayContaining([
        { approvalId: approved, tool: 'deploy_serving', status: 'ran', result: 'm-1' },
        { approvalId: rejected, tool: 'deploy_serving', status: 'rejected', reason: 'Wrong model' },
        { approvalId: expiring, tool: 'deploy_serving', status: 'expired', reason: 'The request expired before anyone decided it.' },
      ]),
    );
    expect(await after.resume()).toEqual([]);
    expect(await new AgentRuntime(t.app.decisions, t.app.approvals, 'deployer', [deploy]).resume()).toEqual([]);
    expect(runs).toBe(1);
    expect((await t.app.approvals.get(approved))!.status).toBe('consumed');
  });
});

describe('the demo team', () => {
  it('produces allowed calls, denials from the allowlist, flag and policy sources, and pending approvals (one for two people) in one pass', async () => {
    t = tempApp({ agents: readFileSync('config/agents.yaml', 'utf8'), gates: readFileSync('config/gates.yaml', 'utf8'), hooks: readFileSync('config/hooks.yaml', 'utf8'), profile: 'bfsi' });
    const events: TeamEvent[] = [];
    const team = new DemoTeam(t.app, (e) => events.push(e));
    await team.turn(15);
    expect(events.some((e) => e.outcome === 'allowed')).toBe(true);
    const families = new Set((await t.app.denials.query({ limit: 100 })).rows.map((r) => r.ruleSource.split(':')[0]));
    expect([...families].sort()).toEqual(['agent_allowlist', 'flag', 'policy']);
    const pending = await t.app.approvals.list({ status: 'pending' });
    expect(pending.length).toBeGreaterThanOrEqual(3);
    // Whoever tries the demo meets a two-person gate.
    expect(pending.find((a) => a.toolName === 'rollback_serving')).toMatchObject({ gate: 'prod-rollback', approvalsRequired: 2 });
    // ... and a hook: the blind copy is gone before the person who decides sees the mail.
    const mail = pending.find((a) => a.toolName === 'send_email');
    expect(mail).toMatchObject({ gate: 'external-mail' });
    expect(JSON.parse(mail!.argumentsCanonical)).not.toHaveProperty('bcc');
    expect(JSON.parse(mail!.argumentsCanonical)).toMatchObject({ to: 'model-risk@partner-insurer.example' });
  });
});
