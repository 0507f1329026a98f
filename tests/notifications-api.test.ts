/**
 * GET /api/v1/notifications/deliveries inside one process, on SQLite and on PostgreSQL: the route table's definition
 * (the core the Next.js adapter and the decision listener both run: authentication, roles, the query schema), a real
 * application with its sweeper and deliverer running on a real database, and a channel whose receiver is down.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApp, type App } from '@/lib/app';
import { fromWebRequest, toResponse } from '@/lib/http/route';
import { routeEntry } from '@/lib/http/route-table';
import { deployRequest } from '@/lib/test-support/temp-app';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { within } from '@/lib/test-support/wait';

// A port nothing listens on: the receiver is down.
const down = await new Promise<string>((resolve) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => {
    const { port } = s.address() as AddressInfo;
    s.close(() => resolve(`http://127.0.0.1:${port}/hook`));
  });
});

const ADMIN = 'test-admin-token-notifications-0123456789';
const SECRET = 'secret-for-the-test';
const pg15 = usePostgres();
const listDeliveries = routeEntry('/api/v1/notifications/deliveries').methods.GET.route;

interface Body {
  deliveries: { id: number; channel: string; event: string; subject: string; status: string; attempts: number; last_error: string | null; origin: string }[];
  counts: Record<string, number>;
  channels: { id: string; kind: string; events: string[] }[];
  next_cursor: string | null;
}

const databases = {
  SQLite: async (dir: string) => join(dir, 'notifications.db'),
  PostgreSQL: async () => pg15.cluster.urlOf(await pg15.freshDatabase('notify_api')),
};

describe.each(Object.keys(databases) as (keyof typeof databases)[])('GET /api/v1/notifications/deliveries on %s', (kind) => {
  const dir = mkdtempSync(join(tmpdir(), 'swarm-notifications-api-'));
  let app: App;
  let viewer = '';
  let operator = '';

  beforeAll(async () => {
    cpSync('config', join(dir, 'config'), { recursive: true });
    writeFileSync(
      join(dir, 'config', 'notifications.yaml'),
      `channels:\n  - id: pager\n    kind: webhook\n    url: ${down}\n    secret_env: SWARM_TEST_HOOK_SECRET\n    max_attempts: 1\n`,
    );
    app = await openApp({
      dbPath: await databases[kind](dir),
      configDir: join(dir, 'config'),
      env: { ...process.env, SWARM_TEST_HOOK_SECRET: SECRET, SWARM_ADMIN_TOKEN: ADMIN, SWARM_ADMIN_PASSWORD: 'admin-password-1', SWARM_PROFILE: 'bfsi', SWARM_APPROVAL_KEY: 'notifications-api-binding-key-0123456789abcdef' },
      sweepApprovals: true,
    });
    await app.bootstrap();
    await app.auth.createUser('victor', 'viewer', 'viewer-password');
    await app.auth.createUser('olivia', 'operator', 'operator-password');
    viewer = await app.auth.createToken({ username: 'victor' }, 'viewer token');
    operator = await app.auth.createToken({ username: 'olivia' }, 'operator token');
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = async (url: string, token: string): Promise<Response> =>
    toResponse(await listDeliveries.core(app, fromWebRequest(new Request(`http://localhost${url}`, { headers: { authorization: `Bearer ${token}` } })), {}));

  it('shows admins the deliveries that failed because the receiver is down', async () => {
    const row = await app.approvals.request(deployRequest());
    // The application's own deliverer (every 500 ms) tries it and records the failure.
    let body: Body | undefined;
    await within(10_000, async () => {
      const r = await get('/api/v1/notifications/deliveries?status=failed', ADMIN);
      expect(r.status).toBe(200);
      body = (await r.json()) as Body;
      return body.deliveries.length > 0;
    });
    expect(body!.deliveries).toEqual([
      expect.objectContaining({ channel: 'pager', event: 'approval_requested', subject: row.id, status: 'failed', attempts: 1, last_error: 'ECONNREFUSED' }),
    ]);
    expect(body!.counts).toMatchObject({ failed: 1, delivered: 0 });
    expect(body!.channels).toEqual([{ id: 'pager', kind: 'webhook', events: ['approval_requested', 'approval_expiring', 'denial_burst'] }]);
    // Never the URL's secret parts nor the signing secret.
    expect(JSON.stringify(body)).not.toContain(SECRET);
  });

  it('is for admins only', async () => {
    for (const token of [viewer, operator]) expect((await get('/api/v1/notifications/deliveries', token)).status).toBe(403);
    expect((await get('/api/v1/notifications/deliveries?status=lost', ADMIN)).status).toBe(400);
  });
});
