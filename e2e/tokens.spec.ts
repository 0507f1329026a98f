import { mkdirSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { E2E } from './fixtures/accounts';
import { isolatedServer, type IsolatedServer } from './fixtures/isolated-server';

/**
 * /settings/tokens (issue 27) against a server of its own under the bfsi profile: an admin sees every token's owner,
 * scopes, expiry, last use and state; a revocation asks first (the focus on Cancel: Enter revokes nothing) and then
 * takes effect on the API at once; an operator can neither open the page nor see it in the navigation.
 */
test.describe('API tokens page', () => {
  test.describe.configure({ mode: 'serial', timeout: 120_000 });
  let server: IsolatedServer;
  const tokens: Record<'bot' | 'olivia', { token: string; id: string }> = { bot: { token: '', id: '' }, olivia: { token: '', id: '' } };
  const shots = process.env.SCREENSHOT_DIR ?? '/tmp/tokens-helper';

  const tokenOf = (out: string) => /^\s+(\S{20,})\s*$/m.exec(out)?.[1] ?? '';

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    server = isolatedServer(E2E.port + 12);
    server.env.SWARM_PROFILE = 'bfsi';
    await server.start();
    expect((await server.swarm('users', 'add', 'olivia', '--role', 'operator', '--password', 'operator-e2e-password')).code).toBe(0);
    const bot = await server.swarm('tokens', 'add', '--agent', 'deployer', '--name', 'deploy bot', '--expires', '30d');
    expect(bot.code, bot.out).toBe(0);
    const olivia = await server.swarm('tokens', 'add', '--user', 'olivia', '--scopes', 'read', '--name', 'olivia dashboards');
    expect(olivia.code, olivia.out).toBe(0);
    tokens.bot.token = tokenOf(bot.out);
    tokens.olivia.token = tokenOf(olivia.out);
    const list = (await server.swarm('tokens', 'list')).out;
    tokens.bot.id = /^(\d+)\s+deploy bot/m.exec(list)?.[1] ?? '';
    tokens.olivia.id = /^(\d+)\s+olivia dashboards/m.exec(list)?.[1] ?? '';
    expect(tokens.bot.id).not.toBe('');
    // The bot works, once: its last use is written in the background within seconds.
    await server.check(tokens.bot.token, { agent: 'deployer', tool: 'monitor_drift', arguments: {} });
    mkdirSync(shots, { recursive: true });
  });
  test.afterAll(async () => {
    await server?.kill('SIGTERM');
  });

  test('lists every token with owner, scopes, expiry, last use and state, at 1440 and 390 px', async ({ page }) => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await server.signIn(page);
    await page.getByRole('link', { name: /Tokens/ }).click();
    await expect(page).toHaveURL(/\/settings\/tokens$/);
    await expect(page.getByRole('heading', { name: 'API tokens' })).toBeVisible();
    await expect(page.getByText('New tokens expire after 90 days.')).toBeVisible();
    const bot = page.locator(`tr[data-token-id="${tokens.bot.id}"]`);
    await expect(bot).toContainText('agent deployer');
    await expect(bot).toContainText('deploy bot');
    await expect(bot.locator('td[data-label="Scopes"]')).toHaveText('decide');
    await expect(bot).toContainText('Active');
    const olivia = page.locator(`tr[data-token-id="${tokens.olivia.id}"]`);
    await expect(olivia.locator('td[data-label="Scopes"]')).toHaveText('read');
    await expect(olivia.locator('td[data-label="Owner"]')).toContainText('olivia');
    await expect(olivia.locator('td[data-label="Last used (UTC)"]')).toHaveText('never');
    // SWARM_ADMIN_TOKEN: made by the environment, no expiry
    await expect(page.locator('tr', { hasText: 'SWARM_ADMIN_TOKEN' }).locator('td[data-label="Expires (UTC)"]')).toHaveText('never');
    // The bot's use shows once the background write is done (a few seconds): reload until it does.
    await expect(async () => {
      await page.reload();
      await expect(bot.locator('td[data-label="Last used (UTC)"]')).toHaveText(/^\d{4}-\d\d-\d\d \d\d:\d\d$/, { timeout: 1_000 });
    }).toPass({ timeout: 20_000 });
    await page.screenshot({ path: `${shots}/tokens-1440.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(bot.locator('td[data-label="Scopes"]')).toBeVisible();
    await page.screenshot({ path: `${shots}/tokens-390.png`, fullPage: true });
  });

  test('revokes a token only after a confirmation: Enter in the dialog cancels, the button revokes, the API refuses it at once', async ({ page }) => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await server.signIn(page);
    await page.goto(`${server.url}/settings/tokens`);
    const bot = page.locator(`tr[data-token-id="${tokens.bot.id}"]`);
    await bot.getByRole('button', { name: `Revoke token ${tokens.bot.id} (deploy bot)` }).click();
    const dialog = page.getByRole('dialog', { name: `Revoke token ${tokens.bot.id}?` });
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText('deploy bot');
    await expect(dialog).toContainText('agent deployer');
    await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await page.screenshot({ path: `${shots}/tokens-revoke-dialog-1440.png` });
    // A stray Enter presses Cancel: nothing is revoked.
    await page.keyboard.press('Enter');
    await expect(dialog).toBeHidden();
    await expect(bot).toContainText('Active');
    await server.check(tokens.bot.token, { agent: 'deployer', tool: 'monitor_drift', arguments: {} });

    await page.setViewportSize({ width: 390, height: 844 });
    await bot.getByRole('button', { name: `Revoke token ${tokens.bot.id} (deploy bot)` }).click();
    await expect(dialog).toBeVisible();
    await page.screenshot({ path: `${shots}/tokens-revoke-dialog-390.png` });
    const revoked = page.waitForResponse((r) => r.url().endsWith(`/api/v1/tokens/${tokens.bot.id}/revoke`));
    await dialog.getByRole('button', { name: 'Revoke token' }).click();
    expect((await revoked).status()).toBe(200);
    await expect(bot).toContainText('Revoked');
    await expect(bot.getByRole('button', { name: /Revoke/ })).toHaveCount(0);
    const refused = await fetch(`${server.url}/api/v1/permissions/check`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.bot.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'deployer', tool: 'monitor_drift', arguments: {} }),
    });
    expect(refused.status).toBe(401);
  });

  test('is for admins only: an operator is refused the page and is not offered it', async ({ page }) => {
    await server.signIn(page, 'olivia', 'operator-e2e-password');
    await expect(page.getByRole('link', { name: /Tokens/ })).toHaveCount(0);
    const response = await page.goto(`${server.url}/settings/tokens`);
    expect(response?.status()).toBe(403);
  });
});
