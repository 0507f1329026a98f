import { expect, test, type Page } from '@playwright/test';
import { askDeploy, openQueue } from './fixtures/approval-requests';
import { signIn, signInWithForm } from './fixtures/session';

/**
 * Issue 24, 2: an ended session is said at once on every console page, with a sign-in link back to the same view;
 * on /approvals nothing goes on as if live (no polling, no countdown, no approve or reject).
 */

/** Ends the session from elsewhere (as a sign-out in another tab does): the server forgets it, the cookie goes. */
async function endSessionElsewhere(page: Page): Promise<void> {
  const res = await page.request.post('/api/v1/auth/logout');
  expect(res.ok()).toBe(true);
}

test('a signed-out /approvals says so within one poll, stops, and its link returns to the same view', async ({ page, request }) => {
  const id = await askDeploy(request, `m-ses-${Date.now().toString(36)}`);
  await openQueue(page, '/approvals?risk=high');
  const card = page.locator(`[data-approval-id="${id}"]`);
  await expect(card).toBeVisible();
  await expect(page.locator('section[data-live="true"]')).toBeVisible();

  // the next poll (every 3 s) answers 401: the banner says it, without any click
  const refused = page.waitForResponse((r) => r.url().includes('/api/v1/approvals') && r.status() === 401);
  await endSessionElsewhere(page);
  await refused;
  const banner = page.getByRole('alert').filter({ hasText: 'You are signed out' });
  await expect(banner).toBeVisible();

  // nothing goes on as if live: polling stopped, times marked as not updating, decisions disabled with the reason
  await expect(page.locator('section[data-live="false"]')).toBeVisible();
  await expect(card.getByRole('button', { name: 'Approve…' })).toBeDisabled();
  await expect(card.getByRole('button', { name: 'Reject…' })).toBeDisabled();
  await expect(card.locator('[data-stale="true"]')).toContainText('not updating');
  await expect(page.getByText('Approving and rejecting are off until you sign in again.')).toBeVisible();
  await expect(page).toHaveTitle(/signed out/i);
  // the shortcuts are off as well: a opens nothing
  await card.focus();
  await page.keyboard.press('a');
  await expect(page.getByRole('dialog')).toHaveCount(0);

  await page.setViewportSize({ width: 1440, height: 900 });
  await page.screenshot({ path: 'test-results/screens/signed-out-1440.png' });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: 'test-results/screens/signed-out-390.png' });

  // the link comes back to this exact view (the filter included)
  await banner.getByRole('link', { name: 'Sign in again' }).click();
  await expect(page).toHaveURL(/\/login\?next=%2Fapprovals%3Frisk%3Dhigh$/);
  await signInWithForm(page, 'olivia');
  await expect(page).toHaveURL(/\/approvals\?risk=high$/);
  await expect(page.locator('section[data-live="true"]')).toBeVisible();
  await expect(page.getByRole('alert').filter({ hasText: 'You are signed out' })).toHaveCount(0);
});

for (const path of ['/denials', '/audit', '/reports', '/notifications', '/transparency']) {
  test(`a signed-out ${path} says so at the next session check, with a link back`, async ({ page }) => {
    await signIn(page, 'admin');
    await page.goto(path);
    await expect(page.getByTestId('signed-in-user')).toBeVisible();
    await endSessionElsewhere(page);
    // the check runs when the person comes back to the tab (and every 30 s); a 401 of the page's own fetches counts too.
    // The person comes back until the page says it: a heavy page may not listen yet the moment its HTML is shown.
    const banner = page.getByRole('alert').filter({ hasText: 'You are signed out' });
    await expect(async () => {
      await page.evaluate(() => window.dispatchEvent(new Event('focus')));
      await expect(banner).toBeVisible({ timeout: 1_000 });
    }).toPass({ timeout: 15_000 });
    await expect(banner.getByRole('link', { name: 'Sign in again' })).toHaveAttribute('href', `/login?next=${encodeURIComponent(path)}`);
  });
}
