/**
 * Notifications against the real built server: gated calls over REST reach a signed webhook receiver in the test, a
 * broken receiver's failure is shown to admins on /notifications (keyboard-usable, at desktop and phone widths).
 */
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { E2E } from './fixtures/accounts';
import { isolatedServer } from './fixtures/isolated-server';

test.describe.configure({ mode: 'serial', timeout: 120_000 });

const SECRET = 'e2e-hook-secret-0123456789';

test('gated calls notify a signed webhook; a failing channel is shown to admins on /notifications', async ({ page }, info) => {
  const got: { signed: boolean; event: string; agent: string }[] = [];
  const receiver: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      if (req.url === '/down') return void res.writeHead(500).end('maintenance');
      const ts = String(req.headers['x-swarm-timestamp']);
      const signed = req.headers['x-swarm-signature'] === `sha256=${createHmac('sha256', SECRET).update(`${ts}.${body}`).digest('hex')}`;
      const json = JSON.parse(body) as { event: string; approval: { agent: string } };
      got.push({ signed, event: json.event, agent: json.approval.agent });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  const server = isolatedServer(E2E.port + 60);
  server.env.SWARM_E2E_HOOK_SECRET = SECRET;
  server.env.SWARM_PUBLIC_URL = server.url;
  writeFileSync(
    join(server.configDir, 'notifications.yaml'),
    `channels:
  - id: ops-hook
    kind: webhook
    url: ${base}/hook
    secret_env: SWARM_E2E_HOOK_SECRET
  - id: pager-bridge
    kind: webhook
    url: ${base}/down
    secret_env: SWARM_E2E_HOOK_SECRET
    events: [approval_requested]
    max_attempts: 1
bursts:
  - { id: shadow-burst, denials: 50, within: 60s, agent: shadow_agent }
`,
  );
  await server.start();
  try {
    for (const model of ['m-101', 'm-102']) {
      const res = await fetch(`${server.url}/api/v1/permissions/check`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: model, env: 'prod' } }),
      });
      expect(((await res.json()) as { decision: string }).decision).toBe('ASK');
    }
    await expect.poll(() => got.length, { timeout: 15_000 }).toBe(2);
    expect(got.every((g) => g.signed && g.event === 'approval_requested' && g.agent === 'deployer')).toBe(true);

    await page.setViewportSize({ width: 1440, height: 900 });
    await server.signIn(page);

    await page.goto(`${server.url}/notifications`);
    await expect(page.getByRole('heading', { name: 'Notifications', level: 1 })).toBeVisible();
    await expect(page.getByText('ops-hook', { exact: false }).first()).toBeVisible();
    await expect(async () => {
      await page.reload();
      await expect(page.getByRole('link', { name: 'Failed (2)' })).toBeVisible({ timeout: 500 });
      await expect(page.getByRole('link', { name: 'Delivered (2)' })).toBeVisible({ timeout: 500 });
    }).toPass({ timeout: 15_000 });
    await expect(page.getByRole('cell', { name: 'HTTP 500: maintenance' }).first()).toBeVisible();
    await page.screenshot({ path: info.outputPath('notifications-1440.png'), fullPage: true });

    // Keyboard: Tab reaches the state filter, Enter applies it.
    const failed = page.getByRole('link', { name: 'Failed (2)' });
    for (let i = 0; i < 40 && !(await failed.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press('Tab');
    await expect(failed).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/status=failed/);
    await expect(page.getByRole('link', { name: 'Failed (2)' })).toHaveAttribute('aria-current', 'page');
    await expect(page.getByText('✕ Failed')).toHaveCount(2);
    await expect(page.getByText('✓ Delivered')).toHaveCount(0);

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.url}/notifications`);
    await expect(page.getByRole('heading', { name: 'Deliveries' })).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await page.screenshot({ path: info.outputPath('notifications-390.png'), fullPage: true });

    // The JSON for scripts; never for a non-admin.
    const api = await fetch(`${server.url}/api/v1/notifications/deliveries?status=failed`, { headers: { authorization: `Bearer ${server.token}` } });
    const body = (await api.json()) as { deliveries: { channel: string; last_error: string }[] };
    expect(body.deliveries.map((d) => [d.channel, d.last_error])).toEqual([
      ['pager-bridge', 'HTTP 500: maintenance'],
      ['pager-bridge', 'HTTP 500: maintenance'],
    ]);
    expect(JSON.stringify(body)).not.toContain(SECRET);
  } finally {
    await server.kill('SIGTERM');
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
});
