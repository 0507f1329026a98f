import { expect, test } from '@playwright/test';
import { E2E, user } from './fixtures/accounts';
import { signInWithForm } from './fixtures/session';

test.describe('the console shell', () => {
  test('a page requested without a session redirects to the login and back after it', async ({ page }) => {
    await page.goto('/approvals');
    await expect(page).toHaveURL(/\/login\?next=%2Fapprovals/);
    await signInWithForm(page, 'olivia');
    await expect(page).toHaveURL(/\/approvals$/);
    await expect(page.getByRole('heading', { level: 1, name: 'Approvals' })).toBeVisible();
  });

  test('shows the signed-in user, the role and the navigation, and signs out', async ({ page }) => {
    await signInWithForm(page, 'alex');
    await expect(page).toHaveURL(/\/denials$/);
    const user = page.getByTestId('signed-in-user');
    await expect(user).toContainText('alex');
    await expect(user).toContainText('auditor');
    const nav = page.getByRole('navigation', { name: 'Console' });
    for (const name of ['Denials', 'Approvals', 'Transparency']) await expect(nav.getByRole('link', { name: new RegExp(name) })).toBeVisible();
    await expect(nav.getByRole('link', { name: /Denials/ })).toHaveAttribute('aria-current', 'page');
    await page.screenshot({ path: 'test-results/screens/shell-denials.png', fullPage: true });

    await nav.getByRole('link', { name: /Transparency/ }).click();
    await expect(page.getByRole('heading', { level: 1, name: 'Transparency' })).toBeVisible();
    await expect(page.getByRole('table').getByText('audit_trail_security_events').first()).toBeVisible();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(page).toHaveURL(/\/login/);
    await page.goto('/denials');
    await expect(page).toHaveURL(/\/login\?next=%2Fdenials/);
  });

  test('a wrong password gets a clear message that does not say which part was wrong', async ({ page }) => {
    await page.goto('/login');
    await page.getByLabel('User name').fill('olivia');
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').filter({ hasText: /\S/ })).toHaveText('The user name or password is not correct.');
    // the name stays; the password field is empty again and has the focus, for the next try
    await expect(page.getByLabel('User name')).toHaveValue('olivia');
    await expect(page.getByLabel('Password')).toHaveValue('');
    await expect(page.getByLabel('Password')).toBeFocused();
    await page.screenshot({ path: 'test-results/screens/login-error.png' });
  });

  test('the sign-in form works before the page\'s JavaScript runs, and never puts the password in an address', async ({ browser }) => {
    // A person (or a test) can press "Sign in" before the page is hydrated; with JavaScript off that moment lasts.
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const password = user('olivia').password;
    const requests: { method: string; url: string }[] = [];
    page.on('request', (r) => requests.push({ method: r.method(), url: r.url() }));
    await page.goto('/login?next=%2Fapprovals');
    await page.getByLabel('User name').fill('olivia');
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').filter({ hasText: /\S/ })).toHaveText('The user name or password is not correct.');
    await expect(page.getByLabel('User name')).toHaveValue('olivia');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(/\/approvals$/);
    await expect(page.getByTestId('signed-in-user')).toContainText('olivia');
    const submits = requests.filter((r) => new URL(r.url).pathname === '/login' && r.method === 'POST');
    expect(submits).toHaveLength(2);
    for (const r of requests) expect(decodeURIComponent(r.url)).not.toContain(password);
    for (const r of requests) expect(decodeURIComponent(r.url)).not.toContain('not-the-password');
    await context.close();
  });

  test('the login works with the keyboard alone', async ({ page }) => {
    await page.goto('/login');
    await page.keyboard.type('olivia');
    await page.keyboard.press('Tab');
    await page.keyboard.type('operator-e2e-password');
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('signed-in-user')).toContainText('olivia');
  });

  test('each role lands where it works, and is offered only the pages it can open', async ({ browser }) => {
    const cases = [
      { name: 'alex', landing: /\/denials$/, links: ['Denials', 'Audit', 'Reports', 'Approvals', 'Transparency', 'Policy'] },
      { name: 'olivia', landing: /\/approvals$/, links: ['Denials', 'Audit', 'Reports', 'Approvals', 'Transparency', 'Policy'] },
      { name: 'victor', landing: /\/transparency$/, links: ['Transparency'] },
      { name: 'admin', landing: /\/denials$/, links: ['Denials', 'Audit', 'Reports', 'Approvals', 'Transparency', 'Policy', 'Notifications', 'Tokens'] },
    ] as const;
    for (const c of cases) {
      const context = await browser.newContext();
      const page = await context.newPage();
      try {
        await signInWithForm(page, c.name);
        await expect(page, c.name).toHaveURL(c.landing);
        const nav = page.getByRole('navigation', { name: 'Console' });
        // The pages the role can open, then the documentation and the API reference, which every role is offered.
        await expect(nav.getByRole('link'), c.name).toHaveText([...c.links, 'Documentation', 'API reference'].map((l) => new RegExp(`^${l}`)));
      } finally {
        await context.close();
      }
    }
  });

  test('a viewer is refused the denial explorer with HTTP 403, and the refusal is recorded', async ({ page, request }) => {
    await signInWithForm(page, 'victor');
    const response = await page.goto('/denials');
    expect(response?.status()).toBe(403);
    await expect(page.getByRole('heading', { name: 'You do not have access to this page' })).toBeVisible();
    await expect(page.getByText('rbac:auditor')).toBeVisible();
    const res = await request.get('/api/v1/permissions/denials?rule_source=rbac:auditor&limit=5', { headers: { authorization: `Bearer ${E2E.adminToken}` } });
    const body = (await res.json()) as { denials: { http_path: string; principal: string }[] };
    expect(body.denials.some((d) => d.http_path === '/denials' && d.principal === 'victor')).toBe(true);
  });
});
