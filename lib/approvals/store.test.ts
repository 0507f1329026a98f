import { afterEach, describe, expect, it } from 'vitest';
import { untilPast } from '@/lib/test-support/wait';
import { deployRequest, tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { canonicalJson, hashArguments } from './canonical';

let t: TempApp | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});

const req = deployRequest;
/** the requester of deployRequest(), as it runs its call */
const deployer = { id: 'agent:deployer', role: 'viewer' } as const;

describe('canonical arguments', () => {
  it('give the same hash whatever the key order', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe('{"a":{"c":3,"d":2},"b":1}');
    expect(hashArguments({ env: 'prod', model_id: 'm' })).toBe(hashArguments({ model_id: 'm', env: 'prod' }));
    expect(hashArguments({ env: 'prod' })).not.toBe(hashArguments({ env: 'staging' }));
  });
});

describe('the approval store', () => {
  it('shares one pending approval between identical calls', async () => {
    t = tempApp();
    const a = await t.app.approvals.request(req());
    const b = await t.app.approvals.request(req({ arguments: { env: 'prod', model_id: 'm-42' } }));
    expect(b.id).toBe(a.id);
    expect((await t.app.approvals.request(req({ arguments: { model_id: 'm-43', env: 'prod' } }))).id).not.toBe(a.id);
  });

  it('lets exactly one of many concurrent decisions win; the others get a conflict', async () => {
    t = tempApp();
    const { id } = await t.app.approvals.request(req());
    const outcomes: string[] = [];
    for (let i = 0; i < 20; i++) {
      try {
        if (i % 2) await t.app.approvals.reject(id, { id: `op${i}`, role: 'operator' }, 'no');
        else await t.app.approvals.approve(id, { id: `op${i}`, role: 'operator' });
        outcomes.push('won');
      } catch (e) {
        outcomes.push((e as { code?: string }).code ?? 'other');
      }
    }
    expect(outcomes.filter((o) => o === 'won')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'CONFLICT')).toHaveLength(19);
  });

  it('consumes an approval exactly once', async () => {
    t = tempApp();
    const { id } = await t.app.approvals.request(req());
    expect(await t.app.approvals.consume(id, deployer)).toBe(false);
    await t.app.approvals.approve(id, { id: 'olivia', role: 'operator' });
    expect(await t.app.approvals.consume(id, deployer)).toBe(true);
    expect(await t.app.approvals.consume(id, deployer)).toBe(false);
  });

  it('expires a request past its time, records it as a denial, and refuses to approve it', async () => {
    t = tempApp();
    const { id } = await t.app.approvals.request(req({ expiresInSeconds: 0.05 }));
    await untilPast((await t.app.approvals.get(id))!.expiresAt);
    await expect(t!.app.approvals.approve(id, { id: 'olivia', role: 'operator' })).rejects.toThrow(/expired at .* before anyone decided it/);
    expect((await t.app.approvals.get(id))!.status).toBe('expired');
    const d = (await t.app.denials.query({ ruleSource: 'hitl:deploy' })).rows;
    expect(d).toHaveLength(1);
    expect(d[0]!.reason).toMatch(/expired/);
  });

  it('closes an expired request and opens a new one when the same call asks again', async () => {
    t = tempApp();
    const first = await t.app.approvals.request(req({ expiresInSeconds: 0.05 }));
    await untilPast((await t.app.approvals.get(first.id))!.expiresAt);
    const second = await t.app.approvals.request(req());
    expect(second.id).not.toBe(first.id);
    expect((await t.app.approvals.get(first.id))!.status).toBe('expired');
    expect(await t.app.denials.count({ ruleSource: 'hitl:deploy' })).toBe(1);
  });

  it('refuses the requester as approver (separation of duties)', async () => {
    t = tempApp();
    const { id } = await t.app.approvals.request(req({ requestedBy: 'olivia' }));
    await expect(t!.app.approvals.approve(id, { id: 'olivia', role: 'operator' })).rejects.toThrow(/Separation of duties/);
  });

  it('keeps every request: the database refuses to delete one', async () => {
    t = tempApp();
    await t.app.approvals.request(req());
    expect(() => t!.app.db.$client.prepare('DELETE FROM approvals').run()).toThrow(/DELETE is refused/);
  });
});
