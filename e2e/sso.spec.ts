import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { E2E } from './fixtures/accounts';
import { isolatedServer, type IsolatedServer } from './fixtures/isolated-server';
import { startTestProvider, type TestProvider } from '../lib/test-support/oidc-provider';

/**
 * Single sign-on end to end (issue 27): a server of its own (port E2E + 13) whose config/sso.yaml names a real OpenID
 * Provider started here (oidc-provider on E2E + 14, with people and groups of its own). People sign in through the
 * provider's own login page and land where their role works; a person in no mapped group is refused with a page that
 * says why; a group change changes the role at the next sign-in; sign-out ends the session here and at the provider;
 * passwords are off but for the break-glass administrator, whose sign-in shows on /audit, and a refused password says
 * the same whoever the name; a return path that a browser would read as another site is never followed.
 */
const SHOTS = '/tmp/sso';
const SECRET_ENV = 'SSO_E2E_CLIENT_SECRET';

test.describe('single sign-on in the console', () => {
  test.describe.configure({ mode: 'serial', timeout: 90_000 });
  let server: IsolatedServer;
  let op: TestProvider;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    server = isolatedServer(E2E.port + 13);
    op = await startTestProvider({
      port: E2E.port + 14,
      redirectUris: [`${server.url}/api/v1/auth/sso/corp/callback`],
      postLogoutRedirectUris: [`${server.url}/login`],
      backchannelLogoutUri: `${server.url}/api/v1/auth/sso/corp/backchannel-logout`,
      people: [
        { sub: 'p-olivia', preferred_username: 'olivia.ops', groups: ['swarm-operators'] },
        { sub: 'p-alex', preferred_username: 'alex.risk', groups: ['risk-audit'] },
        { sub: 'p-mallory', preferred_username: 'mallory', groups: ['marketing'] },
      ],
    });
    writeFileSync(
      join(server.configDir, 'sso.yaml'),
      `base_url: ${server.url}
session_lifetime: 8h
local_login: break_glass
break_glass_user: admin
providers:
  - id: corp
    name: Corporate sign-in
    issuer: ${op.issuer}
    client_id: ${op.clientId}
    client_secret_env: ${SECRET_ENV}
    scopes: [openid, profile, email, groups, offline_access]
    roles:
      admin: [swarm-admins]
      operator: [swarm-operators]
      auditor: [risk-audit]
`,
    );
    server.env[SECRET_ENV] = op.clientSecret;
    await server.start();
  });
  test.afterAll(async () => {
    await server?.kill('SIGTERM');
    await op?.close();
  });

  /** From the console's login page, by keyboard, to the provider's page; sign in there as `login`. */
  async function signInThroughProvider(page: Page, login: string): Promise<void> {
    await page.goto(`${server.url}/login`);
    const button = page.getByRole('link', { name: 'Sign in with Corporate sign-in' });
    await expect(button).toBeVisible();
    await button.focus();
    await page.keyboard.press('Enter');
    // the provider's own login page (its development page: the login names the person)
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any-password');
    await page.locator('button[type="submit"]').click();
  }

  async function signOut(page: Page): Promise<void> {
    await page.getByRole('button', { name: 'Sign out' }).click();
    // the provider asks to confirm ending its session, then sends the browser back to the console's login page
    await page.locator('button[type="submit"]', { hasText: /yes/i }).click();
    await expect(page).toHaveURL(`${server.url}/login`);
  }

  test('the login page offers the provider by keyboard, and passwords only to the break-glass administrator', async ({ page }) => {
    for (const [width, height] of [
      [1440, 900],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      await page.goto(`${server.url}/login`);
      await expect(page.getByRole('link', { name: 'Sign in with Corporate sign-in' })).toBeVisible();
      // the password form is folded away under the break-glass heading
      await expect(page.getByLabel('User name')).toBeHidden();
      await page.screenshot({ path: `${SHOTS}/login-${width}.png`, fullPage: true });
    }
    await page.keyboard.press('Tab');
    await expect(page.getByRole('link', { name: 'Sign in with Corporate sign-in' })).toBeFocused();
  });

  test('an operator and an auditor sign in through the provider and land where each works', async ({ page }) => {
    await signInThroughProvider(page, 'p-olivia');
    await expect(page).toHaveURL(/\/approvals/);
    await expect(page.getByTestId('signed-in-user')).toContainText('olivia.ops');
    await expect(page.getByTestId('signed-in-user')).toContainText(/operator/i);
    await signOut(page);

    await signInThroughProvider(page, 'p-alex');
    await expect(page).toHaveURL(/\/denials/);
    await expect(page.getByTestId('signed-in-user')).toContainText('alex.risk');
    await expect(page.getByTestId('signed-in-user')).toContainText(/auditor/i);
  });

  test('sign-out ends the session here and at the provider', async ({ page }) => {
    await signInThroughProvider(page, 'p-alex');
    await expect(page.getByTestId('signed-in-user')).toContainText('alex.risk');
    await signOut(page);
    // here: the console's pages need a sign-in again
    await page.goto(`${server.url}/denials`);
    await expect(page).toHaveURL(/\/login/);
    // there: the provider asks for the login again instead of sending the browser straight back
    await page.getByRole('link', { name: 'Sign in with Corporate sign-in' }).click();
    await expect(page.locator('input[name="login"]')).toBeVisible();
  });

  test('a return path that a browser would read as another site is not followed after sign-in: the browser stays here', async ({ browser }) => {
    // A tab or newline is dropped by the browser and a backslash read as a slash: /<TAB>/evil.example is //evil.example.
    for (const next of ['%2F%09%2Fevil.example', '%2F%0A%2Fevil.example', '%2F%09%5Cevil.example']) {
      const context = await browser.newContext();
      // Were the browser sent there, this page answers (the machine's network is closed), so the test sees where it went.
      await context.route(/^https?:\/\/evil\.example\//, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<title>evil.example</title><p>another site</p>' }));
      const page = await context.newPage();
      await page.goto(`${server.url}/api/v1/auth/sso/corp/start?next=${next}`);
      await page.locator('input[name="login"]').fill('p-olivia');
      await page.locator('input[name="password"]').fill('any-password');
      await page.locator('button[type="submit"]').click();
      // the signed-in page goes on to / (which sends an operator to the approvals), never to the other site
      await expect(page, next).toHaveURL(`${server.url}/approvals`);
      await expect(page.getByTestId('signed-in-user')).toContainText('olivia.ops');
      expect(new URL(page.url()).host).toBe(new URL(server.url).host);
      await context.close();
    }
  });

  test('a person in no mapped group is refused with a page that says why', async ({ page }) => {
    await signInThroughProvider(page, 'p-mallory');
    await expect(page).toHaveURL(/\/login\/refused\?reason=no_mapped_group/);
    await expect(page.locator('p[role="alert"]')).toContainText('none of your groups there gives a role');
    for (const [width, height] of [
      [1440, 900],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      await page.screenshot({ path: `${SHOTS}/refused-${width}.png`, fullPage: true });
    }
    await page.getByRole('link', { name: 'Back to sign-in' }).click();
    await expect(page).toHaveURL(/\/login$/);
    // a reason the page does not know, even one every object has, gets the general sentence
    for (const reason of ['toString', 'made_up']) {
      await page.goto(`${server.url}/login/refused?reason=${reason}`);
      await expect(page.locator('p[role="alert"]')).toHaveText('The sign-in was refused. Start again from the sign-in page.');
    }
  });

  test('a group change at the provider changes the role at the next sign-in', async ({ page }) => {
    op.people.get('p-alex')!.groups = ['swarm-operators'];
    await signInThroughProvider(page, 'p-alex');
    await expect(page.getByTestId('signed-in-user')).toContainText(/operator/i);
    await expect(page).toHaveURL(/\/approvals/);
    op.people.get('p-alex')!.groups = ['risk-audit'];
  });

  test('the break-glass administrator signs in with a password, and /audit shows it; /transparency lists the provider', async ({ page }) => {
    await page.goto(`${server.url}/login`);
    await page.locator('summary', { hasText: 'Break-glass administrator' }).click();
    await page.getByLabel('User name').fill('admin');
    // the isolated server's administrator (e2e/fixtures/isolated-server.ts)
    await page.getByLabel('Password').fill('isolated-admin-password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect(page.getByTestId('signed-in-user')).toContainText('admin');
    await page.goto(`${server.url}/audit`);
    await expect(page.getByText('auth.break_glass').first()).toBeVisible();
    await page.goto(`${server.url}/transparency#sso`);
    await expect(page.getByTestId('sso-provider-corp')).toContainText(SECRET_ENV);
    await expect(page.getByTestId('sso-provider-corp')).not.toContainText(op.clientSecret);
    await expect(page.getByTestId('sso-local-login')).toContainText('break-glass');
    for (const [width, height] of [
      [1440, 900],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      await page.locator('#sso').scrollIntoViewIfNeeded();
      await page.locator('section[aria-labelledby="sso"]').screenshot({ path: `${SHOTS}/transparency-sso-${width}.png` });
    }
  });

  test('a refused password says the same whoever the name: the break-glass name is not told apart', async ({ page }) => {
    const answers: string[] = [];
    for (const username of ['admin', 'olivia.ops', 'nobody-here']) {
      await page.goto(`${server.url}/login`);
      await page.locator('summary', { hasText: 'Break-glass administrator' }).click();
      await page.getByLabel('User name').fill(username);
      await page.getByLabel('Password').fill('not-the-password');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      const alert = page.locator('p[role="alert"]');
      await expect(alert).toBeVisible({ timeout: 20_000 });
      answers.push((await alert.textContent()) ?? '');
    }
    expect(answers[0]).toContain('user name or password is not correct');
    expect(answers[0]).toContain('break-glass administrator');
    expect(answers).toEqual([answers[0], answers[0], answers[0]]);
    // and over the API: one status and one message
    const api = await Promise.all(
      ['admin', 'olivia.ops'].map(async (username) => {
        const r = await page.request.post(`${server.url}/api/v1/auth/login`, { data: { username, password: 'not-the-password' }, headers: { origin: server.url } });
        return { status: r.status(), message: ((await r.json()) as { error: { message: string } }).error.message };
      }),
    );
    expect(api[0]!.status).toBe(401);
    expect(api[1]).toEqual(api[0]);
  });
});
