/**
 * Waiting for a person's decision (GET /api/v1/approvals/{id}?wait=SECONDS, lib/approvals/wait.ts), through the
 * route's own core, on both databases with two servers on one database: the agent waits on one, an operator decides on
 * the other, and the wait answers as soon as the change feed tells of it. Bounded by the wait and by the request's
 * expiry, released when the client goes away, and only for the one who asked or an operator.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from '@/lib/app';
import type { Principal } from '@/lib/permissions';
import { toResponse, type ApiRequest } from '@/lib/http/route';
import { routeDefinition } from '@/lib/http/route-table';
import { TEST_AGENTS, TEST_APPROVAL_KEY } from '@/lib/test-support/temp-app';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { within } from '@/lib/test-support/wait';

const pg15 = usePostgres();
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const deployer: Principal = { kind: 'agent', id: 'deployer', role: 'viewer', agent: 'deployer', scopes: ['decide'] };
const operator = { id: 'olivia', role: 'operator' } as const;

describe.each(['SQLite', 'PostgreSQL'] as const)('waiting for an approval on %s, two servers', (kind) => {
  let a: App;
  let b: App;
  let tokens: Record<'deployer' | 'evaluator' | 'auditor' | 'operator', string>;

  beforeAll(async () => {
    const config = mkdtempSync(join(tmpdir(), 'swarm-approval-wait-'));
    writeFileSync(join(config, 'agents.yaml'), TEST_AGENTS);
    writeFileSync(join(config, 'permission_policies.yaml'), 'rules: []\n');
    writeFileSync(join(config, 'gates.yaml'), 'gates:\n  - id: deploy\n    tools: [deploy_serving]\n    expires_in: 1h\n  - id: drift\n    tools: [monitor_drift]\n    expires_in: 2s\n');
    const dbPath = kind === 'SQLite' ? join(config, 'swarm.db') : pg15.cluster.urlOf(await pg15.freshDatabase('waits'));
    const env = { SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY, SWARM_AUDIT_KEY_DIR: join(config, 'keys') };
    a = await openApp({ dbPath, configDir: config, env });
    b = await openApp({ dbPath, configDir: config, env });
    await a.bootstrap();
    await a.auth.createUser('alex', 'auditor', 'auditor-password-1');
    await a.auth.createUser('olivia', 'operator', 'operator-password-1');
    tokens = {
      deployer: await a.auth.createToken({ agent: 'deployer' }, 'deployer', 'test'),
      evaluator: await a.auth.createToken({ agent: 'evaluator' }, 'evaluator', 'test'),
      auditor: await a.auth.createToken({ username: 'alex' }, 'alex', 'test'),
      operator: await a.auth.createToken({ username: 'olivia' }, 'olivia', 'test'),
    };
    cleanups.push(async () => {
      await a.close();
      await b.close();
      rmSync(config, { recursive: true, force: true });
    });
  }, 60_000);

  /** GET /api/v1/approvals/{id}[?wait=N] answered by `app`'s route core, as `token`; `signal` stands for the client's connection. */
  async function read(app: App, token: string, id: string, wait?: number, signal?: AbortSignal): Promise<{ status: number; body: Record<string, unknown> }> {
    const url = new URL(`http://localhost/api/v1/approvals/${id}${wait === undefined ? '' : `?wait=${wait}`}`);
    const request = new Request(url, { headers: { authorization: `Bearer ${token}` }, signal });
    const api: ApiRequest = { method: 'GET', path: url.pathname, url, header: (n) => request.headers.get(n), clientAddress: '127.0.0.1', text: async () => '', toRequest: () => request };
    const res = toResponse(await routeDefinition('/api/v1/approvals/{id}', 'GET').core(app, api, { id }));
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  const ask = async (principal: Principal, tool: string, model: string) => {
    const r = await a.decisions.decide({ kind: 'tool', principal, agent: principal.id, tool, arguments: { model_id: model, env: 'prod' } });
    expect(r.decision).toBe('ASK');
    return r.approvalId!;
  };

  it('answers as soon as an operator decides on another server, within the change feed\'s delay', async () => {
    const id = await ask(deployer, 'deploy_serving', `m-wait-${kind}`);
    const started = Date.now();
    const waiting = read(a, tokens.deployer, id, 30);
    // Held: still waiting once the decision is about to be made (no answer before it).
    let answered = false;
    void waiting.then(() => (answered = true));
    await within(5_000, async () => a.approvalWaits.size === 1);
    expect(answered).toBe(false);
    await b.approvals.approve(id, operator, 'change ticket CHG-7');
    const decidedAt = Date.now();
    const { status, body } = await waiting;
    expect(status).toBe(200);
    expect(body).toMatchObject({ id, status: 'approved' });
    // Told by the change feed: PostgreSQL's NOTIFY at once, SQLite's commit seen within its 250 ms poll.
    expect(Date.now() - decidedAt).toBeLessThan(2_000);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(a.approvalWaits.size).toBe(0);
  });

  it('answers at once for a request that is decided already, and as it stands when the wait is up', async () => {
    const id = await ask(deployer, 'deploy_serving', `m-undecided-${kind}`);
    const started = Date.now();
    const { body } = await read(b, tokens.deployer, id, 1);
    expect(body).toMatchObject({ id, status: 'pending' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    await a.approvals.reject(id, operator, 'not in the window');
    const again = Date.now();
    expect((await read(b, tokens.deployer, id, 30)).body).toMatchObject({ status: 'rejected' });
    expect(Date.now() - again).toBeLessThan(1_000);
  });

  it('ends at the request\'s own expiry, answering it expired', async () => {
    const id = await ask(deployer, 'monitor_drift', `m-expiring-${kind}`);
    const started = Date.now();
    const { body } = await read(a, tokens.deployer, id, 30);
    expect(body).toMatchObject({ id, status: 'expired' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('releases the wait when the client goes away', async () => {
    const id = await ask(deployer, 'deploy_serving', `m-gone-${kind}`);
    const client = new AbortController();
    const waiting = read(b, tokens.deployer, id, 30, client.signal);
    await within(5_000, async () => b.approvalWaits.size === 1);
    client.abort();
    await waiting;
    expect(b.approvalWaits.size).toBe(0);
  });

  it('serves the one who asked and an operator; another agent is told there is no such request; a wait over 60 s is refused', async () => {
    const id = await ask(deployer, 'deploy_serving', `m-whose-${kind}`);
    expect((await read(a, tokens.evaluator, id)).status).toBe(404);
    expect((await read(a, tokens.evaluator, id, 1)).status).toBe(404);
    // An auditor reads it, but does not hold a connection for it; an operator may.
    expect((await read(a, tokens.auditor, id)).status).toBe(200);
    expect((await read(a, tokens.auditor, id, 1)).status).toBe(404);
    expect((await read(a, tokens.operator, id, 0.2)).body).toMatchObject({ status: 'pending' });
    const tooLong = await read(a, tokens.deployer, id, 61);
    expect(tooLong.status).toBe(400);
    expect(JSON.stringify(tooLong.body)).toContain('wait is at most 60 seconds');
  });
});
