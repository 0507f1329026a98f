/**
 * Hooks from config/hooks.yaml against the real built server: /transparency lists every hook, read as an
 * administrator would. What the hooks do to calls (block, rewrite, rate limit, webhook and shell reviews, the events
 * they hear) is tests/hooks-config.test.ts, through the route handlers in process (issue 43).
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { E2E } from './fixtures/accounts';
import { isolatedServer, type IsolatedServer } from './fixtures/isolated-server';
import { hooksYaml } from '../lib/test-support/config-texts';

test.describe.configure({ mode: 'serial', timeout: 90_000 });

const SECRET = 'e2e-hook-secret-0123456789';
const SCREENS = 'test-results/screens';

let server: IsolatedServer;
let receiver: Server;
let shellLog = '';
const heard: { event: string; hook: string; signed: boolean; json: Record<string, unknown> }[] = [];
/** deliveries whose body was not JSON (said in a failure message) */
const unreadable: string[] = [];


test.beforeAll(async () => {
  // A server of its own (and CLI calls) starting: more than one test's time on a busy machine.
  test.setTimeout(90_000);
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const expected = `sha256=${createHmac('sha256', SECRET).update(`${String(req.headers['x-swarm-timestamp'])}.${body}`).digest('hex')}`;
      let json: { event: string; hook: string; call?: { arguments: { env?: string } } };
      try {
        json = JSON.parse(body) as typeof json;
      } catch {
        // A delivery cut short (the sender gave up on a slow answer and retries it): not an event, and never a throw
        // here, which would end whichever test is running.
        unreadable.push(`${String(req.headers['x-swarm-event'])}: ${body.length} bytes`);
        return res.writeHead(400).end();
      }
      heard.push({ event: json.event, hook: json.hook, signed: req.headers['x-swarm-signature'] === expected, json });
      res.writeHead(200, { 'content-type': 'application/json' });
      if (json.event !== 'before_tool_call') return res.end();
      res.end(
        JSON.stringify(
          json.call?.arguments.env === 'prod'
            ? { decision: 'block', reason: 'The release desk has not signed off a production rollback.' }
            : { decision: 'rewrite', set: { change_ticket: 'CHG-1042' } },
        ),
      );
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  server = isolatedServer(E2E.port + 73);
  server.env.SWARM_HOOK_SECRET = SECRET;
  shellLog = join(server.dir, 'shell-hook.jsonl');
  // Shell hooks run only while this flag is on.
  server.env.SWARM_FLAG_PLUGIN_SHELL_HOOKS_ENABLED = 'true';
  writeFileSync(join(server.configDir, 'hooks.yaml'), hooksYaml(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, shellLog));
  await server.start();
});

test.afterAll(async () => {
  await server.kill('SIGTERM');
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
});

test('/transparency lists every hook, what it does and why', async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await server.signIn(page);
  await page.goto(`${server.url}/transparency#hooks`);
  const table = page.getByRole('table', { name: 'Hooks in force' });
  await expect(table.getByRole('row')).toHaveCount(10);
  const review = table.getByRole('row').filter({ hasText: 'hook:rollback-review' });
  await expect(review).toContainText(/Asks http:\/\/127\.0\.0\.1:\d+\/hook \(signed with \$SWARM_HOOK_SECRET; 3s timeout, 0 retries\)/);
  await expect(review).toContainText('The release desk reviews every rollback.');
  await expect(table.getByRole('row').filter({ hasText: 'hook:drift-rate' })).toContainText('Allows 2 calls per agent and tool every 10 min, then denies');
  await expect(table.getByRole('row').filter({ hasText: 'hook:page-operators' })).toContainText('Approval requested');
  await page.getByRole('heading', { name: 'Hooks', exact: true }).scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENS}/transparency-hooks-1440.png` });
  await page.setViewportSize({ width: 390, height: 844 });
  await table.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENS}/transparency-hooks-390.png` });
});
