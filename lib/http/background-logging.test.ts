/**
 * The console's own polling is not logged as decisions (issue 24): with decision_log_all on, a GET carrying
 * `x-swarm-background: 1` from a signed-in person's session writes no `decision.allowed` row, the same call without
 * the header does, and an agent's token cannot use the header to hide its calls. A refused background call is still
 * a denial. And the audit page's default view (exclude_type=decision) leaves the logged decisions out. On SQLite and
 * on PostgreSQL.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from '@/lib/app';
import { BACKGROUND_HEADER, SESSION_COOKIE, toResponse, type ApiRequest, type RouteCore } from '@/lib/http/route';
import { routeDefinition } from '@/lib/http/route-table';
import { tempApp, TEST_AGENTS, TEST_APPROVAL_KEY, type TempApp } from '@/lib/test-support/temp-app';
import { usePostgres } from '@/lib/test-support/use-postgres';

async function call(app: App, core: RouteCore, path: string, headers: Record<string, string>): Promise<number> {
  const url = new URL(`http://localhost${path}`);
  const request = new Request(url, { headers });
  const api: ApiRequest = { method: 'GET', path: url.pathname, url, header: (n) => request.headers.get(n), clientAddress: '127.0.0.1', text: async () => '', toRequest: () => request };
  return toResponse(await core(app, api, {})).status;
}

const logged = async (app: App): Promise<number> => (await app.securityEvents.list({ type: 'decision.allowed', limit: 1000 })).rows.length;
const denials = async (app: App): Promise<number> => (await app.denials.query({ limit: 1000 })).rows.length;

/** A minute of the /approvals poll (every 3 s) by a signed-in operator, then the same calls in the other cases. */
async function pollingScenario(app: App): Promise<void> {
  const operator = await app.auth.createUser('olivia', 'operator', 'operator-password');
  const viewer = await app.auth.createUser('vera', 'viewer', 'viewer-password');
  const { token: session } = await app.auth.createSession(operator.id);
  const { token: viewerSession } = await app.auth.createSession(viewer.id);
  const agentToken = await app.auth.createToken({ agent: 'deployer' }, 'test');
  const poll = routeDefinition('/api/v1/approvals', 'GET').core;
  const cookie = `${SESSION_COOKIE}=${session}`;

  const before = await logged(app);
  for (let i = 0; i < 20; i++) expect(await call(app, poll, '/api/v1/approvals', { cookie, [BACKGROUND_HEADER]: '1' })).toBe(200);
  expect(await logged(app)).toBe(before);

  // The same call without the header is a person's request: logged.
  expect(await call(app, poll, '/api/v1/approvals', { cookie })).toBe(200);
  expect(await logged(app)).toBe(before + 1);

  // A token's call is an agent's or a script's: the header does not hide it.
  const verify = routeDefinition('/api/v1/audit/verify', 'GET').core;
  const agentStatus = await call(app, verify, '/api/v1/audit/verify', { authorization: `Bearer ${agentToken}`, [BACKGROUND_HEADER]: '1' });
  expect(agentStatus).toBe(403);
  const userToken = await app.auth.createToken({ username: 'olivia' }, 'test');
  expect(await call(app, poll, '/api/v1/approvals', { authorization: `Bearer ${userToken}`, [BACKGROUND_HEADER]: '1' })).toBe(200);
  expect(await logged(app)).toBe(before + 2);

  // The audit page's default view leaves the logged decisions out (their own view: type=decision).
  const all = (await app.securityEvents.list({ limit: 1000 })).rows;
  const apart = (await app.securityEvents.list({ excludeType: 'decision', limit: 1000 })).rows;
  expect(all.some((e) => e.type.startsWith('decision.'))).toBe(true);
  expect(apart.some((e) => e.type.startsWith('decision.'))).toBe(false);
  expect(apart.length).toBe(all.filter((e) => !e.type.startsWith('decision.')).length);
  expect((await app.securityEvents.list({ excludeType: 'decision.allowed', limit: 1000 })).rows.some((e) => e.type === 'decision.allowed')).toBe(false);

  // A refused background call is still a denial.
  const denied = await denials(app);
  expect(await call(app, poll, '/api/v1/approvals', { cookie: `${SESSION_COOKIE}=${viewerSession}`, [BACKGROUND_HEADER]: '1' })).toBe(403);
  expect(await denials(app)).toBe(denied + 1);
}

describe('background polling on SQLite', () => {
  let t: TempApp | undefined;
  afterEach(() => {
    t?.cleanup();
    t = undefined;
  });
  it('writes no logged decision for a minute of session polling with x-swarm-background: 1, and one per call without it', async () => {
    t = tempApp({ profile: 'bfsi' });
    expect(t.app.flags.values().get('decision_log_all')).toBe(true);
    await pollingScenario(t.app);
  });
});

describe('background polling on PostgreSQL', () => {
  const pg15 = usePostgres();
  const config = mkdtempSync(join(tmpdir(), 'swarm-pg-background-'));
  writeFileSync(join(config, 'agents.yaml'), TEST_AGENTS);
  writeFileSync(join(config, 'permission_policies.yaml'), 'rules: []\n');
  let app: App | undefined;
  beforeAll(async () => {
    const database = await pg15.freshDatabase('background');
    app = await openApp({ dbPath: pg15.cluster.urlOf(database), configDir: config, env: { SWARM_PG_POOL_MAX: '4', SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY, SWARM_FLAG_DECISION_LOG_ALL: 'true' } });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    rmSync(config, { recursive: true, force: true });
  });
  it('behaves as on SQLite', async () => {
    expect(app!.flags.values().get('decision_log_all')).toBe(true);
    await pollingScenario(app!);
  });
});
