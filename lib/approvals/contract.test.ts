/**
 * The approval store contract, run against the one store on both databases: SQLite (two connections to one file) and
 * PostgreSQL (two connection pools to the test run's throwaway cluster), each pair standing for two servers on one
 * database, each with the real audit recorder of its database. Whatever the two do at the same moment, each request
 * has exactly one outcome and each approval runs once; what was told after a commit is readable by the other server.
 * And the applications on both: their hooks hear of an approval only once its audit rows have committed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import { PostgresDatabase, SqliteDatabase, type SqlDatabase } from '@/db/dialect';
import { openApp, type App } from '@/lib/app';
import { recordApprovalTransition, type TransitionRecorder } from '@/lib/audit/approval-events';
import { AuditRecorder } from '@/lib/audit/trail/recorder';
import { PgAuditRecorder } from '@/lib/audit/trail/pg-recorder';
import type { HookEvent } from '@/lib/hooks/runner';
import type { Principal } from '@/lib/permissions';
import { deployRequest, TEST_AGENTS, TEST_APPROVAL_KEY, testBinding } from '@/lib/test-support/temp-app';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { SqlApprovalStore, type ApprovalEvent, type ApprovalListener, type Decider } from './store';

/** What another server reads of a transition when it is told of it: its row's status, its security event, its denial. */
interface Seen {
  event: ApprovalEvent;
  status: string | undefined;
  securityEvent: boolean;
  denial: boolean;
}

interface TwoServers {
  a: SqlApprovalStore;
  b: SqlApprovalStore;
  /** the events told after their commit, in order */
  events: ApprovalEvent[];
  /** the events told inside their transactions (a rolled-back transaction's included) */
  inTransaction: ApprovalEvent[];
  /** what the other server read at the moment each event was told after its commit */
  seen: Promise<Seen>[];
}

/** Rows of a query on one connection, `?` placeholders on either database. */
type Reader = (text: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

const pg15 = usePostgres();
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const RECORDER_OPTIONS = { revision: () => null, logAllDecisions: () => false };

/**
 * Two stores on one database, each with its database's recorder behind the one transition writer
 * (recordApprovalTransition), and a read of the other server's connection at each after-commit tell.
 */
function twoServers(servers: [{ database: SqlDatabase; recorder: TransitionRecorder; read: Reader }, { database: SqlDatabase; recorder: TransitionRecorder; read: Reader }]): TwoServers {
  const events: ApprovalEvent[] = [];
  const inTransaction: ApprovalEvent[] = [];
  const seen: Promise<Seen>[] = [];
  const store = (self: 0 | 1) => {
    const { database, recorder } = servers[self];
    const other = servers[self === 0 ? 1 : 0].read;
    const listener: ApprovalListener = {
      *inTransaction(event, tx) {
        inTransaction.push(event);
        yield* recordApprovalTransition(recorder, event, tx, new Set());
      },
      afterCommit(event) {
        events.push(event);
        // Read now, from the other server's connection (SQLite reads at once; PostgreSQL sends the queries now).
        const id = event.row.id;
        const row = other('SELECT status FROM approvals WHERE id = ?', [id]);
        const security = other('SELECT id FROM security_events WHERE target = ? AND type = ?', [id, `approval.${event.type}`]);
        const denial = other('SELECT id FROM permission_denials WHERE decision_id = ?', [event.row.decisionId ?? '-']);
        seen.push(
          Promise.all([row, security, denial]).then(([r, e, d]) => ({ event, status: r[0]?.status as string | undefined, securityEvent: e.length > 0, denial: d.length > 0 })),
        );
      },
    };
    return new SqlApprovalStore(database, listener, testBinding);
  };
  return { a: store(0), b: store(1), events, inTransaction, seen };
}

const stores: Record<'SQLite' | 'PostgreSQL', () => Promise<TwoServers>> = {
  async SQLite() {
    const dir = mkdtempSync(join(tmpdir(), 'swarm-contract-'));
    const [d1, d2] = [openDatabase({ path: join(dir, 'a.db') }), openDatabase({ path: join(dir, 'a.db') })];
    cleanups.push(() => {
      d1.$client.close();
      d2.$client.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const side = (d: typeof d1) => ({
      database: new SqliteDatabase(d.$client),
      recorder: new AuditRecorder(d.$client, RECORDER_OPTIONS),
      read: (text: string, params: unknown[]) => Promise.resolve(d.$client.prepare(text).all(...params) as Record<string, unknown>[]),
    });
    return twoServers([side(d1), side(d2)]);
  },
  async PostgreSQL() {
    const name = await pg15.freshDatabase('approvals');
    const side = (p: ReturnType<typeof pg15.pool>) => ({
      database: new PostgresDatabase(p),
      recorder: new PgAuditRecorder(p, RECORDER_OPTIONS),
      read: async (text: string, params: unknown[]) => {
        let n = 0;
        return (await p.query(text.replace(/\?/g, () => `$${++n}`), params)).rows as Record<string, unknown>[];
      },
    });
    return twoServers([side(pg15.pool(name, 5)), side(pg15.pool(name, 5))]);
  },
};

const deploy = deployRequest;
const olivia: Decider = { id: 'olivia', role: 'operator' };
const otto: Decider = { id: 'otto', role: 'operator' };
const deployerAgent: Principal = { kind: 'agent', id: 'deployer', role: 'viewer', agent: 'deployer' };

/** Run both at once; what each did. */
async function race<T>(...work: (() => Promise<T>)[]) {
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
    await expect(s.a.approve(req.id, olivia)).rejects.toMatchObject({ code: 'FORBIDDEN', details: { refusal: 'self_decision' } });
    const first = await s.a.approve(req.id, otto);
    expect(first.status).toBe('pending');
    await expect(s.b.approve(req.id, otto)).rejects.toMatchObject({ details: { refusal: 'second_vote_by_same_person' } });
    await expect(s.b.approve(req.id, { id: 'vic', role: 'viewer' })).rejects.toMatchObject({ details: { refusal: 'role_not_allowed' } });
    const second = await s.b.approve(req.id, { id: 'ada', role: 'admin' });
    expect(second).toMatchObject({ status: 'approved', decidedBy: 'ada' });
    expect(s.events.filter((e) => e.type === 'refused' && e.row.id === req.id).map((e) => e.refusal!.rule)).toEqual(['self_decision', 'second_vote_by_same_person', 'role_not_allowed']);
    expect((await s.b.votesFor([req.id])).get(req.id)!.map((v) => v.approver)).toEqual(['otto', 'ada']);
    // Both people named, in order, and either one finds it as who decided it.
    expect((await s.a.toJson([second]))[0]!.deciders).toEqual(['otto', 'ada']);
    for (const person of ['otto', 'ada']) expect((await s.a.list({ status: 'decided', decided_by: person })).map((r) => r.id)).toContain(req.id);
    expect((await s.a.list({ status: 'decided', decided_by: 'olivia' })).map((r) => r.id)).not.toContain(req.id);
  });

  it('expires a request once, whichever servers sweep, and refuses to decide it afterwards', async () => {
    const req = await s.a.request(deploy({ arguments: { model_id: 'm-late', env: 'prod' }, expiresInSeconds: -1 }));
    const swept = await Promise.all([s.a.expireDue(), s.b.expireDue()]);
    expect(swept.reduce((x, y) => x + y, 0)).toBeGreaterThanOrEqual(1);
    expect(s.events.filter((e) => e.type === 'expired' && e.row.id === req.id)).toHaveLength(1);
    await expect(s.b.approve(req.id, olivia)).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await s.a.get(req.id))!).toMatchObject({ status: 'expired', decidedBy: 'system' });
  });

  it('records a decision refused on a request past its time, or already expired, naming who tried and why', async () => {
    // Past its time but not yet swept: the decision expires it, and the refusal says it expired.
    const late = await s.a.request(deploy({ arguments: { model_id: 'm-too-late', env: 'prod' }, expiresInSeconds: -1 }));
    await expect(s.a.approve(late.id, olivia)).rejects.toMatchObject({ code: 'CONFLICT', details: { refusal: 'expired' } });
    // Expired already: a second try is refused as a request decided.
    await expect(s.b.reject(late.id, otto, 'too late anyway')).rejects.toMatchObject({ code: 'CONFLICT', details: { refusal: 'already_decided' } });
    const refused = s.events.filter((e) => e.type === 'refused' && e.row.id === late.id);
    expect(refused.map((e) => [e.by?.id, e.refusal!.rule])).toEqual([
      ['olivia', 'expired'],
      ['otto', 'already_decided'],
    ]);
  });

  it('expires only the due requests of the scope it is given: one id, or one call (agent, tool, arguments)', async () => {
    const due = (model: string, agent = 'deployer') => s.a.request(deploy({ agent, arguments: { model_id: model, env: 'prod' }, expiresInSeconds: -1 }));
    const [one, two, mine, theirs] = [await due('m-scope-1'), await due('m-scope-2'), await due('m-scope-3'), await due('m-scope-3', 'other_agent')];
    const waiting = await s.a.request(deploy({ arguments: { model_id: 'm-scope-1', env: 'staging' } }));
    expect(await s.b.expireDue({ id: one.id })).toBe(1);
    expect((await s.a.get(one.id))!.status).toBe('expired');
    expect((await s.a.get(two.id))!.status).toBe('pending');
    expect(await s.b.expireDue({ agent: 'deployer', tool: 'deploy_serving', hash: mine.argumentsHash })).toBe(1);
    expect((await s.a.get(mine.id))!.status).toBe('expired');
    expect((await s.a.get(theirs.id))!.status).toBe('pending');
    // Nothing that is not due, in any scope.
    expect(await s.b.expireDue({ id: waiting.id })).toBe(0);
    expect(await s.a.expireDue({ agent: 'other_agent' })).toBe(1);
    expect((await s.a.get(two.id))!.status).toBe('pending');
    expect((await s.a.get(waiting.id))!.status).toBe('pending');
    await s.a.expireDue();
    expect((await s.a.get(two.id))!.status).toBe('expired');
  });

  it('tells of each transition only after its commit: the other server reads the row, its security event and its denial by then', async () => {
    const told = s.events.length;
    const asked = await s.a.request(deploy({ arguments: { model_id: 'm-told-1', env: 'prod' }, decisionId: `dec-told-1-${kind}` }));
    await s.b.reject(asked.id, olivia, 'not this one');
    const late = await s.b.request(deploy({ arguments: { model_id: 'm-told-2', env: 'prod' }, expiresInSeconds: -1, decisionId: `dec-told-2-${kind}` }));
    await s.a.expireDue({ id: late.id });
    const approved = await s.a.request(deploy({ arguments: { model_id: 'm-told-3', env: 'prod' } }));
    await s.b.approve(approved.id, otto, 'fine');
    await s.a.consume(approved.id, { id: 'agent:deployer', role: 'viewer' });
    const seen = (await Promise.all(s.seen)).filter((x) => s.events.indexOf(x.event) >= told);
    expect(seen.map((x) => [x.event.type, x.status])).toEqual([
      ['requested', 'pending'],
      ['rejected', 'rejected'],
      ['requested', 'pending'],
      ['expired', 'expired'],
      ['requested', 'pending'],
      ['approved', 'approved'],
      ['consumed', 'consumed'],
    ]);
    expect(seen.every((x) => x.securityEvent)).toBe(true);
    expect(seen.filter((x) => x.event.type === 'rejected' || x.event.type === 'expired').every((x) => x.denial)).toBe(true);
  });

  it('tells a refused decision after its own commit, and nothing of a transaction that rolled back', async () => {
    const req = await s.a.request(deploy({ arguments: { model_id: 'm-refused', env: 'prod' }, requestedBy: 'olivia' }));
    const before = s.events.length;
    await expect(s.b.approve(req.id, olivia)).rejects.toMatchObject({ details: { refusal: 'self_decision' } });
    // The decision's transaction rolled back: nothing of it was told after a commit; the refusal was, once recorded.
    expect(s.events.slice(before).map((e) => e.type)).toEqual(['refused']);
    const refused = (await Promise.all(s.seen)).find((x) => x.event === s.events[before]);
    expect(refused).toMatchObject({ status: 'pending', securityEvent: true });
  });
});

describe.each(['SQLite', 'PostgreSQL'] as const)('the application on %s', (kind) => {
  let app: App;
  let read: Reader;
  const config = mkdtempSync(join(tmpdir(), 'swarm-approval-hooks-'));
  writeFileSync(join(config, 'agents.yaml'), TEST_AGENTS);
  writeFileSync(join(config, 'permission_policies.yaml'), 'rules: []\n');
  writeFileSync(join(config, 'gates.yaml'), 'gates:\n  - id: deploy\n    tools: [deploy_serving]\n');
  beforeAll(async () => {
    if (kind === 'SQLite') {
      const file = join(config, 'swarm.db');
      app = await openApp({ dbPath: file, configDir: config, env: {} });
      // Another connection to the same file: what another process reads.
      const raw = new Database(file, { readonly: true });
      read = async (text, params) => raw.prepare(text).all(...params) as Record<string, unknown>[];
      cleanups.push(() => raw.close());
    } else {
      const name = await pg15.freshDatabase('hooks');
      app = await openApp({ dbPath: pg15.cluster.urlOf(name), configDir: config, env: { SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY } });
      const raw = pg15.pool(name, 2);
      read = async (text, params) => {
        let n = 0;
        return (await raw.query(text.replace(/\?/g, () => `$${++n}`), params)).rows as Record<string, unknown>[];
      };
    }
    cleanups.push(async () => {
      await app.close();
      rmSync(config, { recursive: true, force: true });
    });
  }, 60_000);

  it('stores the MCP client that asked with its approval request, and shows it in the approval JSON (null for a call without one)', async () => {
    const deployer: Principal = { kind: 'agent', id: 'deployer', role: 'viewer', agent: 'deployer' };
    const ask = (model: string, client?: string) =>
      app.decisions.decide({ kind: 'tool', principal: deployer, agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: model, env: 'prod' }, ...(client ? { client } : {}) });
    const viaMcp = await ask('m-client-1', 'remote-test 1');
    const direct = await ask('m-client-2');
    expect(viaMcp.decision).toBe('ASK');
    // Read back from another connection: what the row holds, not what the process remembers.
    const rows = await read('SELECT id, client FROM approvals WHERE id IN (?, ?)', [viaMcp.approvalId, direct.approvalId]);
    expect(Object.fromEntries(rows.map((r) => [r.id, r.client]))).toEqual({ [viaMcp.approvalId!]: 'remote-test 1', [direct.approvalId!]: null });
    const json = await app.approvals.toJson([(await app.approvals.get(viaMcp.approvalId!))!, (await app.approvals.get(direct.approvalId!))!]);
    expect(json.map((j) => j.client)).toEqual(['remote-test 1', null]);
    // A name longer than the check API accepts is cut to its bound, whoever built the request.
    const long = await app.approvals.request(deploy({ arguments: { model_id: 'm-client-3', env: 'prod' }, client: `  ${'x'.repeat(300)}  ` }));
    expect(long.client).toBe('x'.repeat(200));
  });

  it('tells the approval hooks only once the transition and its audit rows are readable from another connection', async () => {
    await app.flags.setOverride('hooks_enabled', true, 'test', 'approval hooks');
    const heard: Promise<{ event: string; status: unknown; securityEvent: boolean; denial: boolean }>[] = [];
    let told: () => void = () => undefined;
    const all = new Promise<void>((resolve) => (told = resolve));
    const listen = (event: 'approval_requested' | 'approval_decided') =>
      app.registerHook({
        id: `seen-${event}`,
        event,
        run: (e: HookEvent) => {
          const approval = e.approval as { id: string; status: string };
          heard.push(
            Promise.all([
              read('SELECT type FROM security_events WHERE target = ? AND type = ?', [approval.id, `approval.${approval.status === 'pending' ? 'requested' : approval.status}`]),
              read('SELECT id FROM permission_denials WHERE decision_id = ?', [e.decision_id ?? '-']),
            ]).then(([events, denials]) => ({ event, status: approval.status, securityEvent: events.length > 0, denial: denials.length > 0 })),
          );
          if (heard.length === 4) told();
        },
      });
    listen('approval_requested');
    listen('approval_decided');
    const deployer: Principal = { kind: 'agent', id: 'deployer', role: 'viewer', agent: 'deployer' };
    const ask = (model: string) => app.decisions.decide({ kind: 'tool', principal: deployer, agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: model, env: 'prod' } });
    const rejected = (await ask('m-hook-1')).approvalId!;
    await app.approvals.reject(rejected, olivia, 'not today');
    // A request past its expiry, expired by the sweeper's own method.
    const expiring = await app.approvals.request(deploy({ arguments: { model_id: 'm-hook-2', env: 'prod' }, expiresInSeconds: -1, decisionId: `dec-hook-${kind}` }));
    expect(await app.approvals.expireDue({ id: expiring.id })).toBe(1);
    await all;
    const seen = await Promise.all(heard);
    expect(seen.filter((x) => x.event === 'approval_requested')).toEqual([
      expect.objectContaining({ status: 'pending', securityEvent: true }),
      expect.objectContaining({ status: 'pending', securityEvent: true }),
    ]);
    expect(seen.filter((x) => x.event === 'approval_decided')).toEqual([
      { event: 'approval_decided', status: 'rejected', securityEvent: true, denial: true },
      { event: 'approval_decided', status: 'expired', securityEvent: true, denial: true },
    ]);
  });
});
