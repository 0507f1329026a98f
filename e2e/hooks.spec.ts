/**
 * Hooks from config/hooks.yaml against the real built server: /transparency lists every hook, read as an
 * administrator would. What the hooks do to calls (block, rewrite, rate limit, webhook and shell reviews, the events
 * they hear) is tests/hooks-config.test.ts, through the route handlers in process (issue 43).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { E2E } from './fixtures/accounts';
import { isolatedServer, type IsolatedServer } from './fixtures/isolated-server';
import { hooksYaml } from '../lib/test-support/config-texts';
import { startHookReceiver, type HookReceiver } from '../lib/test-support/hook-receiver';

test.describe.configure({ mode: 'serial', timeout: 90_000 });

const SECRET = 'e2e-hook-secret-0123456789';
const SCREENS = 'test-results/screens';

let server: IsolatedServer;
let receiver: HookReceiver;
let shellLog = '';

test.beforeAll(async () => {
  // A server of its own (and CLI calls) starting: more than one test's time on a busy machine.
  test.setTimeout(90_000);
  receiver = await startHookReceiver(SECRET);
  server = isolatedServer(E2E.port + 73);
  server.env.SWARM_HOOK_SECRET = SECRET;
  shellLog = join(server.dir, 'shell-hook.jsonl');
  // Shell hooks run only while this flag is on.
  server.env.SWARM_FLAG_PLUGIN_SHELL_HOOKS_ENABLED = 'true';
  writeFileSync(join(server.configDir, 'hooks.yaml'), hooksYaml(receiver.url, shellLog));
  await server.start();
});

test.afterAll(async () => {
  await server.kill('SIGTERM');
  await receiver?.close();
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
