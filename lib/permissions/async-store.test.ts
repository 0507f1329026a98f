/**
 * The engine with a store that answers asynchronously (as PostgreSQL does): the same decision code, driven through
 * promises. The store here is the real one on a temp SQLite file, answering each call a turn of the event loop later,
 * so that every await is a real one and other work runs in between.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_APPROVAL_TTL_SECONDS } from '@/lib/approvals/gates';
import { approvalRequestOf } from '@/lib/approvals/store';
import { consumerOf } from '@/lib/approvals/rules';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { AuditUnavailable, EngineIsAsync, PermissionEngine, type Principal, type RuleSource } from '.';

const later = <T>(f: () => T | Promise<T>) => new Promise<T>((resolve, reject) => setImmediate(() => {
  try {
    resolve(f());
  } catch (error) {
    reject(error);
  }
}));

let t: TempApp | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});

const GATES = 'gates:\n  - id: deploy\n    tools: [deploy_serving]\n';
const deployer: Principal = { kind: 'agent', id: 'deployer', role: 'viewer', agent: 'deployer' };
const call = (tool: string, args: Record<string, unknown> = {}) => ({ kind: 'tool' as const, principal: deployer, agent: 'deployer', tool, arguments: args });

/** An engine over the app's sources and gates whose every store call answers a turn later. */
function asyncEngine(a: TempApp['app'], options: { failRecording?: boolean } = {}) {
  let writes = 0;
  const engine = new PermissionEngine({
    sources: (): RuleSource[] => [...a.configSnapshot().sources],
    gates: () => a.gates,
    ports: {
      async: true,
      flagValues: () => a.flags.values(),
      approvalState: (ctx, gate) => later(() => (gate ? a.approvals.stateFor(ctx.agent, ctx.tool, ctx.arguments, gate.expiresInSeconds ?? DEFAULT_APPROVAL_TTL_SECONDS, ctx.principal) : undefined)),
      recorder: {
        record: (event) =>
          later(() => {
            if (options.failRecording) throw new Error('connection reset');
            writes++;
            return a.recorder.record(event);
          }),
      },
      requestApproval: (ctx, result) => later(async () => (await a.approvals.request(approvalRequestOf(ctx, result))).id),
      consumeApproval: (id, ctx) => later(() => a.approvals.consume(id, consumerOf(ctx.principal))),
    },
  });
  return { engine, writes: () => writes };
}

describe('the engine with an asynchronous store', () => {
  it('refuses the synchronous methods, and decides through the asynchronous ones', async () => {
    t = tempApp({ gates: GATES });
    const { engine } = asyncEngine(t.app);
    expect(() => engine.check(call('train_model'))).toThrow(EngineIsAsync);
    expect(() => engine.decide(call('train_model'))).toThrow(/use decideAsync\(\)/);
    expect(await engine.checkAsync(call('deploy_serving', { model_id: 'm-1', env: 'prod' }))).toMatchObject({ decision: 'ASK', ruleSource: 'hitl:deploy' });

    const denied = await engine.decideAsync(call('train_model'));
    expect(denied).toMatchObject({ decision: 'DENY', ruleSource: 'agent_allowlist' });
    expect(await t.app.denials.get(await t.app.denials.newestId())).toMatchObject({ decisionId: denied.decisionId, toolName: 'train_model' });
  });

  it('asks, and runs an approved call exactly once however many ask for it at the same moment', async () => {
    t = tempApp({ gates: GATES });
    const { engine } = asyncEngine(t.app);
    const args = { model_id: 'm-7', env: 'prod' };
    const asked = await engine.decideAsync(call('deploy_serving', args));
    expect(asked.decision).toBe('ASK');
    // The same call again while it waits: the same request.
    expect((await engine.decideAsync(call('deploy_serving', args))).approvalId).toBe(asked.approvalId);
    await t.app.approvals.approve(asked.approvalId!, { id: 'olivia', role: 'operator' }, 'ok');
    const runs = await Promise.all(Array.from({ length: 5 }, () => engine.decideAsync(call('deploy_serving', args))));
    expect(runs.filter((r) => r.decision === 'ALLOW')).toHaveLength(1);
    expect(runs.filter((r) => r.decision === 'ASK')).toHaveLength(4);
    expect((await t.app.approvals.get(asked.approvalId!))!.status).toBe('consumed');
  });

  it('fails closed when the record cannot be written: the decision is refused, not acknowledged', async () => {
    t = tempApp();
    const { engine } = asyncEngine(t.app, { failRecording: true });
    await expect(engine.decideAsync(call('train_model'))).rejects.toThrow(AuditUnavailable);
    await expect(engine.enforceAsync(call('train_model'))).rejects.toThrow(/could not be recorded, so it is refused: connection reset/);
  });
});
