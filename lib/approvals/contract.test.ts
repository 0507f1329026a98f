/**
 * The approval store contract, run against both stores: SQLite (two connections to one file) and PostgreSQL (two
 * connection pools to the test run's throwaway cluster), each pair standing for two servers on one database.
 * Whatever the two do at the same moment, each request has exactly one outcome and each approval runs once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import type { ApprovalRow } from '@/db/schema';
import type { ApprovalState, Principal } from '@/lib/permissions';
import { deployRequest, testBinding } from '@/lib/test-support/temp-app';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { PgApprovalStore } from './pg-store';
import { ApprovalStore, type ApprovalEvent, type ApprovalRequest, type Decider } from './store';

/** What both stores promise (a synchronous store's answers are awaited like promises). */
interface Contract {
  request(r: ApprovalRequest): ApprovalRow | Promise<ApprovalRow>;
  approve(id: string, by: Decider, reason?: string): ApprovalRow | Promise<ApprovalRow>;
  reject(id: string, by: Decider, reason: string): ApprovalRow | Promise<ApprovalRow>;
  consume(id: string, by: Decider): boolean | Promise<boolean>;
  get(id: string): ApprovalRow | undefined | Promise<ApprovalRow | undefined>;
  stateFor(agent: string, tool: string, args: unknown, ttl: number, principal: Principal): ApprovalState | Promise<ApprovalState>;
  expireDue(): number | Promise<number>;
}

interface TwoServers {
  a: Contract;
  b: Contract;
  events: ApprovalEvent[];
}

const pg15 = usePostgres();
const cleanups: (() => unknown)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

const stores: Record<'SQLite' | 'PostgreSQL', () => Promise<TwoServers>> = {
  async SQLite() {
    const dir = mkdtempSync(join(tmpdir(), 'swarm-contract-'));
    const events: ApprovalEvent[] = [];
    const [d1, d2] = [openDatabase({ path: join(dir, 'a.db') }), openDatabase({ path: join(dir, 'a.db') })];
    cleanups.push(() => {
      d1.$client.close();
      d2.$client.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return { a: new ApprovalStore(d1, (e) => events.push(e), testBinding), b: new ApprovalStore(d2, (e) => events.push(e), testBinding), events };
  },
  async PostgreSQL() {
    const name = await pg15.freshDatabase('approvals');
    const [p1, p2] = [pg15.pool(name, 5), pg15.pool(name, 5)];
    const events: ApprovalEvent[] = [];
    return { a: new PgApprovalStore(p1, (e) => void events.push(e), testBinding), b: new PgApprovalStore(p2, (e) => void events.push(e), testBinding), events };
  },
};

const deploy = deployRequest;
const olivia: Decider = { id: 'olivia', role: 'operator' };
const otto: Decider = { id: 'otto', role: 'operator' };
const deployerAgent: Principal = { kind: 'agent', id: 'deployer', role: 'viewer', agent: 'deployer' };

/** Run both at once; what each did. */
async function race<T>(...work: (() => T | Promise<T>)[]) {
  return Promise.allSettled(work.map((w) => Promise.resolve().then(w)));
}

describe.each(Object.keys(stores) as (keyof typeof stores)[])('the approval store on %s', (kind) => {
  let s: TwoServers;
  beforeAll(async () => {
    s = await stores[kind]();
  });

  it('keeps one pending request per call, however many servers ask for it at once', async () => {
    const r = deploy({ arguments: { model_id: 'm-1', env: 'prod' } });
    const rows = await Promise.all(Array.from({ length: 8 }, (_, i) => Promise.resolve().then(() => (i % 2 ? s.a : s.b).request(r))));
    expect(new Set(rows.map((x) => x.id)).size).toBe(1);
    expect(s.events.filter((e) => e.type === 'requested' && e.row.id === rows[0]!.id)).toHaveLength(1);
    expect(await s.b.stateFor('deployer', 'deploy_serving', { env: 'prod', model_id: 'm-1' }, 3600, deployerAgent)).toEqual({ status: 'pending', id: rows[0]!.id });
  });

  it('gives an approval on one server and a rejection on the other at the same moment exactly one outcome', async () => {
    for (let round = 0; round < 5; round++) {
      const req = await s.a.request(deploy({ arguments: { model_id: `m-race-${round}`, env: 'prod' } }));
      const both = await race(() => s.a.approve(req.id, olivia, 'ok'), () => s.b.reject(req.id, otto, 'not today'));
      const approved = both[0]!;
      const rejected = both[1]!;
      const outcomes = [approved, rejected].filter((o) => o.status === 'fulfilled');
      expect(outcomes).toHaveLength(1);
      const loser = [approved, rejected].find((o) => o.status === 'rejected') as PromiseRejectedResult;
      expect(loser.reason).toMatchObject({ code: 'CONFLICT' });
      const final = (await s.b.get(req.id))!;
      expect(final.status).toBe(approved.status === 'fulfilled' ? 'approved' : 'rejected');
      const settled = s.events.filter((e) => e.row.id === req.id && (e.type === 'rejected' || (e.type === 'approved' && e.row.status === 'approved')));
      expect(settled).toHaveLength(1);
    }
  });

  it('runs an approved call once, whichever server consumes it and however many try', async () => {
    const req = await s.a.request(deploy({ arguments: { model_id: 'm-once', env: 'prod' } }));
    await s.b.approve(req.id, olivia);
    const tries = await Promise.all(Array.from({ length: 10 }, (_, i) => Promise.resolve().then(() => (i % 2 ? s.a : s.b).consume(req.id, { id: 'agent:deployer', role: 'viewer' }))));
    expect(tries.filter(Boolean)).toHaveLength(1);
    expect((await s.a.get(req.id))!.status).toBe('consumed');
    expect(await s.a.stateFor('deployer', 'deploy_serving', { model_id: 'm-once', env: 'prod' }, 3600, deployerAgent)).toEqual({ status: 'none' });
  });

  it('needs two different people for a two-person gate, and never the requester', async () => {
    const req = await s.a.request(deploy({ arguments: { model_id: 'm-2p', env: 'prod' }, approvalsRequired: 2, requestedBy: 'olivia' }));
    await expect(Promise.resolve().then(() => s.a.approve(req.id, olivia))).rejects.toMatchObject({ code: 'FORBIDDEN', details: { refusal: 'self_decision' } });
    const first = await s.a.approve(req.id, otto);
    expect(first.status).toBe('pending');
    await expect(Promise.resolve().then(() => s.b.approve(req.id, otto))).rejects.toMatchObject({ details: { refusal: 'second_vote_by_same_person' } });
    await expect(Promise.resolve().then(() => s.b.approve(req.id, { id: 'vic', role: 'viewer' }))).rejects.toMatchObject({ details: { refusal: 'role_not_allowed' } });
    const second = await s.b.approve(req.id, { id: 'ada', role: 'admin' });
    expect(second).toMatchObject({ status: 'approved', decidedBy: 'ada' });
    expect(s.events.filter((e) => e.type === 'refused' && e.row.id === req.id).map((e) => e.refusal!.rule)).toEqual(['self_decision', 'second_vote_by_same_person', 'role_not_allowed']);
  });

  it('expires a request once, whichever servers sweep, and refuses to decide it afterwards', async () => {
    const req = await s.a.request(deploy({ arguments: { model_id: 'm-late', env: 'prod' }, expiresInSeconds: -1 }));
    const swept = await Promise.all([s.a.expireDue(), s.b.expireDue()]);
    expect(swept.reduce((x, y) => x + y, 0)).toBeGreaterThanOrEqual(1);
    expect(s.events.filter((e) => e.type === 'expired' && e.row.id === req.id)).toHaveLength(1);
    await expect(Promise.resolve().then(() => s.b.approve(req.id, olivia))).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await s.a.get(req.id))!).toMatchObject({ status: 'expired', decidedBy: 'system' });
  });
});
