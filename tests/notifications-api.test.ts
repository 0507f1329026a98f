/**
 * GET /api/v1/notifications/deliveries inside one process: the real route handler and wrapper, the real application
 * (getSqliteApp, with its sweeper and deliverer running) on a real SQLite file, and a channel whose receiver is down.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callRoute, useTempServerEnv } from './support/in-process-api';

// A port nothing listens on: the receiver is down.
const down = await new Promise<string>((resolve) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => {
    const { port } = s.address() as AddressInfo;
    s.close(() => resolve(`http://127.0.0.1:${port}/hook`));
  });
});

const server = useTempServerEnv('notifications', { env: { SWARM_TEST_HOOK_SECRET: 'secret-for-the-test' } });
writeFileSync(
  join(server.dir, 'config', 'notifications.yaml'),
  `channels:\n  - id: pager\n    kind: webhook\n    url: ${down}\n    secret_env: SWARM_TEST_HOOK_SECRET\n    max_attempts: 1\n`,
);

const { getSqliteApp } = await import('@/lib/app');
const deliveries = await import('@/app/api/v1/notifications/deliveries/route');
const { deployRequest } = await import('@/lib/test-support/temp-app');

let viewer = '';
let operator = '';

beforeAll(() => {
  const app = getSqliteApp();
  app.auth.createUser('victor', 'viewer', 'viewer-password');
  app.auth.createUser('olivia', 'operator', 'operator-password');
  viewer = app.auth.createToken({ username: 'victor' }, 'viewer token');
  operator = app.auth.createToken({ username: 'olivia' }, 'operator token');
});

afterAll(() => {
  getSqliteApp().close();
  server.remove();
});

interface Body {
  deliveries: { id: number; channel: string; event: string; subject: string; status: string; attempts: number; last_error: string | null; origin: string }[];
  counts: Record<string, number>;
  channels: { id: string; kind: string; events: string[] }[];
  next_cursor: string | null;
}

describe('GET /api/v1/notifications/deliveries', () => {
  it('shows admins the deliveries that failed because the receiver is down', async () => {
    const app = getSqliteApp();
    const row = await app.approvals.request(deployRequest());
    // The server's own deliverer (every 500 ms) tries it and records the failure.
    const end = Date.now() + 10_000;
    let body: Body | undefined;
    while (Date.now() < end) {
      const r = await callRoute(deliveries.GET, '/api/v1/notifications/deliveries?status=failed', { token: server.adminToken });
      expect(r.status).toBe(200);
      body = (await r.json()) as Body;
      if (body.deliveries.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(body!.deliveries).toEqual([
      expect.objectContaining({ channel: 'pager', event: 'approval_requested', subject: row.id, status: 'failed', attempts: 1, last_error: 'ECONNREFUSED' }),
    ]);
    expect(body!.counts).toMatchObject({ failed: 1, delivered: 0 });
    expect(body!.channels).toEqual([{ id: 'pager', kind: 'webhook', events: ['approval_requested', 'approval_expiring', 'denial_burst'] }]);
    // Never the URL's secret parts nor the signing secret.
    expect(JSON.stringify(body)).not.toContain('secret-for-the-test');
  });

  it('is for admins only', async () => {
    for (const token of [viewer, operator]) {
      const r = await callRoute(deliveries.GET, '/api/v1/notifications/deliveries', { token });
      expect(r.status).toBe(403);
    }
    const bad = await callRoute(deliveries.GET, '/api/v1/notifications/deliveries?status=lost', { token: server.adminToken });
    expect(bad.status).toBe(400);
  });
});
