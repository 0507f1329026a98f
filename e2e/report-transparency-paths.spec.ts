import { expect, test } from '@playwright/test';
import { E2E } from './fixtures/accounts';
import { isolatedServer, type IsolatedServer } from './fixtures/isolated-server';
import { signIn } from './fixtures/session';

/**
 * /transparency is printed and shared: it names the configuration files (policy, agents, gates, tests, hooks) and the
 * profiles' folders without the server's absolute paths (issue 24). The worktree's own absolute path must not appear
 * in the page's text, whoever reads it, an administrator included.
 */
const SHOTS = 'test-results/screens';

for (const [name, width] of [
  ['1440', 1440],
  ['390', 390],
] as const) {
  test(`/transparency at ${name} px shows no absolute path of the server`, async ({ page }) => {
    await page.setViewportSize({ width, height: 900 });
    await signIn(page, 'admin');
    await page.goto('/transparency');
    await expect(page.getByRole('heading', { level: 1, name: 'Transparency' })).toBeVisible();
    // The files are still named: the policy file relative to the server's folder.
    await expect(page.getByText(/permission_policies\.yaml$/)).toBeVisible();
    const text = await page.locator('body').innerText();
    expect(text).not.toContain(process.cwd());
    expect(text).not.toMatch(/(^|[\s("'])\/(?:work|tmp|home|root|var|usr|srv|opt)\//m);
    await page.screenshot({ path: `${SHOTS}/transparency-${name}.png`, fullPage: width === 390 ? false : true });
  });
}

test.describe('/transparency of a server whose configuration lives outside its working directory', () => {
  // Its own server (fixtures/isolated-server.ts): configuration and database in a temporary folder, as an installation
  // with /etc/swarm would have them. Before the fix the page printed those files' absolute paths.
  let server: IsolatedServer;
  test.beforeAll(async () => {
    // A server of its own (and CLI calls) starting: more than one test's time on a busy machine.
    test.setTimeout(90_000);
    server = isolatedServer(E2E.port + 91);
    await server.start();
  });
  test.afterAll(async () => {
    await server.kill('SIGTERM');
  });

  test('names each file without the host path', async ({ page }) => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await server.signIn(page);
    await page.goto(`${server.url}/transparency`);
    await expect(page.getByRole('heading', { level: 1, name: 'Transparency' })).toBeVisible();
    const text = await page.locator('body').innerText();
    expect(text).toContain('permission_policies.yaml');
    expect(text).not.toContain(server.dir);
    expect(text).not.toMatch(/(^|[\s("'])\/(?:work|tmp|home|root|var|usr|srv|opt|etc)\//m);
    await page.screenshot({ path: `${SHOTS}/transparency-outside-1440.png`, fullPage: true });
  });
});
