/**
 * The engine deciding on PostgreSQL, two servers on one database (two applications, two connection pools) against the
 * test run's throwaway cluster: the stores of the decision path (flags, approvals, the audit recorder) on
 * PostgreSQL, the engine's one decision path driven asynchronously.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp } from '@/lib/app';
import type { PostgresApp } from '@/lib/app';
import { startPostgres } from '@/lib/test-support/postgres';
import { PostgresDatabase } from '@/db/dialect';
import { verifyTrail } from '@/lib/audit/trail/verify';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { TEST_AGENTS, TEST_APPROVAL_KEY } from '@/lib/test-support/temp-app';
import { z } from 'zod';
import { AgentRuntime } from '@/lib/agents/runtime';
import { tool } from '@/lib/agents/tool';
import { requireApproval } from '@/lib/approvals/gates';
import { ApprovalRequired, AuditUnavailable, type Principal } from '.';

const pg15 = usePostgres();
let database = '';
const opened: PostgresApp[] = [];
const config = mkdtempSync(join(tmpdir(), 'swarm-pg-engine-'));
writeFileSync(join(config, 'agents.yaml'), TEST_AGENTS);
writeFileSync(join(config, 'permission_policies.yaml'), 'rules: []\n');
writeFileSync(join(config, 'gates.yaml'), 'gates:\n  - id: deploy\n    tools: [deploy_serving]\n');

/** One server: the application on PostgreSQL (its own pool, its stores, its engine). */
async function server(url?: string): Promise<PostgresApp> {
  const app = (await openApp({ dbPath: url ?? pg15.cluster.urlOf(database), configDir: config, env: { SWARM_PG_POOL_MAX: '4', SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY } })) as PostgresApp;
  opened.push(app);
  return app;
}

const agent = (name: string): Principal => ({ kind: 'agent', id: name, role: 'viewer', agent: name });
const call = (name: string, tool: string, args: Record<string, unknown> = {}) => ({ kind: 'tool' as const, principal: agent(name), agent: name, tool, arguments: args });

beforeAll(async () => {
  database = await pg15.freshDatabase('engine');
});
afterAll(async () => {
  for (const app of opened) await app.close().catch(() => undefined);
  rmSync(config, { recursive: true, force: true });
});

describe('the engine on PostgreSQL, two servers', () => {
  it('records the denials of both servers in one chain that verifies, each with the id its caller got', async () => {
    const [a, b] = [await server(), await server()];
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).engine.decideAsync(call('data_cleaner', 'train_model', { i }))),
    );
    expect(results.every((r) => r.decision === 'DENY' && r.ruleSource === 'agent_allowlist')).toBe(true);
    const rows = await a.pool.query<{ id: number; decision_id: string }>('SELECT id, decision_id FROM permission_denials ORDER BY id');
    expect(rows.rows.map((r) => r.id)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(new Set(rows.rows.map((r) => r.decision_id))).toEqual(new Set(results.map((r) => r.decisionId)));
    expect((await verifyTrail(new PostgresDatabase(a.pool), undefined)).failures).toEqual([]);
  });

  it('asks on one server, is approved on the other, and runs once whichever servers ask again at the same moment', async () => {
    const [a, b] = [await server(), await server()];
    const args = { model_id: 'm-pg', env: 'prod' };
    const asked = await a.engine.decideAsync(call('deployer', 'deploy_serving', args));
    expect(asked).toMatchObject({ decision: 'ASK', ruleSource: 'hitl:deploy' });
    expect((await b.engine.decideAsync(call('deployer', 'deploy_serving', args))).approvalId).toBe(asked.approvalId);
    await b.approvals.approve(asked.approvalId!, { id: 'olivia', role: 'operator' }, 'ok');
    const runs = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).engine.decideAsync(call('deployer', 'deploy_serving', args))));
    expect(runs.filter((r) => r.decision === 'ALLOW')).toHaveLength(1);
    const events = await a.pool.query<{ type: string }>('SELECT type FROM security_events WHERE target = $1 ORDER BY id', [asked.approvalId]);
    expect(events.rows.map((r) => r.type)).toEqual(['approval.requested', 'approval.approved', 'approval.consumed']);
    expect((await verifyTrail(new PostgresDatabase(a.pool), undefined)).failures).toEqual([]);
  });

  it('never deadlocks when the same call is asked, approved and asked again on two servers at once', async () => {
    // An approval's transitions lock its row and append to the trail; a new request of the same call, its decision
    // and its consumption race them. Each round: asks from both servers, approvals and asks again all at once.
    const [a, b] = [await server(), await server()];
    for (let round = 0; round < 20; round++) {
      const args = { model_id: `m-race-${round}`, env: 'prod' };
      const first = await a.engine.decideAsync(call('deployer', 'deploy_serving', args));
      const settled = await Promise.allSettled([
        b.approvals.approve(first.approvalId!, { id: 'olivia', role: 'operator' }, 'ok'),
        ...Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).engine.decideAsync(call('deployer', 'deploy_serving', args))),
      ]);
      expect(settled.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason))).toEqual([]);
      const again = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).engine.decideAsync(call('deployer', 'deploy_serving', args))));
      expect(again.every((r) => r.decision === 'ALLOW' || r.decision === 'ASK')).toBe(true);
    }
    expect((await verifyTrail(new PostgresDatabase(a.pool), undefined)).failures).toEqual([]);
    // Nothing was tampered with: no approval may be reported as missing from the trail.
    expect((await a.pool.query("SELECT id FROM security_events WHERE type = 'approval.unverified'")).rows).toEqual([]);
  });

  it('denies on every server within a second of a kill switch thrown on one', async () => {
    const [a, b] = [await server(), await server()];
    expect((await b.engine.decideAsync(call('deployer', 'monitor_drift'))).decision).toBe('ALLOW');
    await a.flags.setOverride('drift_monitoring', false, 'olivia', 'incident');
    const started = Date.now();
    let r = await b.engine.decideAsync(call('deployer', 'monitor_drift'));
    while (r.decision !== 'DENY' && Date.now() - started < 1_000) {
      await new Promise((res) => setTimeout(res, 20));
      r = await b.engine.decideAsync(call('deployer', 'monitor_drift'));
    }
    expect(r).toMatchObject({ decision: 'DENY', ruleSource: 'flag:drift_monitoring' });
    await a.flags.unsetOverride('drift_monitoring', 'olivia', 'over');
  });

  it('runs the agent runtime: an asked call re-run once after approval on another server, a rejection reported once', async () => {
    const [a, b] = [await server(), await server()];
    let runs = 0;
    const deploy = tool({ name: 'deploy_serving', schema: z.object({ model_id: z.string(), env: z.string() }), approval: requireApproval('deploy') }, () => ++runs);
    const onA = new AgentRuntime(a.decisions, a.approvals, 'deployer', [deploy]);
    const asked = (await onA.call('deploy_serving', { model_id: 'rt-1', env: 'prod' }).catch((e: unknown) => e)) as ApprovalRequired;
    expect(asked).toBeInstanceOf(ApprovalRequired);
    const refused = (await onA.call('deploy_serving', { model_id: 'rt-2', env: 'prod' }).catch((e: unknown) => e)) as ApprovalRequired;
    await b.approvals.approve(asked.approvalId, { id: 'olivia', role: 'operator' }, 'ok');
    await b.approvals.reject(refused.approvalId, { id: 'olivia', role: 'operator' }, 'not this one');
    // Two runtimes of the same agent resume at once (a restart on another server): each outcome is settled once.
    const onB = new AgentRuntime(b.decisions, b.approvals, 'deployer', [deploy]);
    const [first, second] = await Promise.all([onA.resume(), onB.resume()]);
    const settled = [...first, ...second];
    expect(settled.filter((o) => o.status === 'ran')).toEqual([{ approvalId: asked.approvalId, tool: 'deploy_serving', status: 'ran', result: 1 }]);
    expect(settled.filter((o) => o.status === 'rejected')).toEqual([{ approvalId: refused.approvalId, tool: 'deploy_serving', status: 'rejected', reason: 'not this one' }]);
    expect(runs).toBe(1);
    expect(await onA.resume()).toEqual([]);
  });

  it('refuses to start a server whose key folder holds no signing key (it never makes one)', async () => {
    const keys = join(config, 'no-keys-here');
    await expect(openApp({ dbPath: pg15.cluster.urlOf(database), configDir: config, env: { SWARM_AUDIT_KEY_DIR: keys }, server: true })).rejects.toThrow(/There is no audit signing key in .*no-keys-here/);
    expect(existsSync(join(keys, 'audit-signing-key.pem'))).toBe(false);
  });

  it('refuses a decision it cannot record once the database is gone (fail closed, nothing acknowledged)', async () => {
    // A cluster of its own: this test stops PostgreSQL, which the run's shared cluster must outlive.
    const other = await startPostgres();
    const doomed = await server(other.url);
    expect((await doomed.engine.decideAsync(call('data_cleaner', 'train_model'))).decision).toBe('DENY');
    other.stop();
    await expect(doomed.engine.decideAsync(call('data_cleaner', 'train_model'))).rejects.toThrow(AuditUnavailable);
    await expect(doomed.engine.decideAsync(call('data_cleaner', 'train_model'))).rejects.toThrow(/PostgreSQL at .* is not available/);
  }, 30_000);
});
