import { expect, test, type Page } from '@playwright/test';
import { E2E } from './fixtures/accounts';
import { signIn, signInWithForm } from './fixtures/session';

/**
 * The audit page against the built server: security events newest first with URL-driven filters, the integrity
 * badge and "Verify now", a failed sign-in as it is recorded, the refusal of a viewer, and the page at two widths.
 */
const admin = { authorization: `Bearer ${E2E.adminToken}` };
const RUN = `e2e${Date.now().toString(36)}`;
const SHOTS = 'test-results/screens';

const table = (page: Page) => page.getByRole('table', { name: 'Security events' });
const rows = (page: Page) => table(page).locator('tbody tr');
const field = (page: Page, name: string) => page.getByRole('search', { name: 'Filter security events' }).getByLabel(name, { exact: true });
const badge = (page: Page) => page.getByTestId('integrity');
/** The rows on screen belong to the URL (a filter change dims the table until the server answers). */
const settled = (page: Page) => expect(table(page)).toHaveAttribute('aria-busy', 'false');

async function openAudit(page: Page, query = ''): Promise<void> {
  await page.goto(`/audit${query}`);
  await expect(page.getByRole('heading', { level: 1, name: 'Audit' })).toBeVisible();
  await expect(rows(page).first()).toBeVisible();
}

test.describe('the audit page', () => {
  test.use({ viewport: { width: 1440, height: 960 } });

  test('shows the sign-in event; filters by type family and outcome live in the URL and survive a reload', async ({ page }) => {
    await signInWithForm(page, 'alex');
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: /Audit/ }).click();
    await expect(page).toHaveURL(/\/audit$/);
    await expect(page.getByRole('heading', { level: 1, name: 'Audit' })).toBeVisible();
    const signIns = rows(page).filter({ hasText: 'auth.login.succeeded' }).filter({ hasText: 'alex' });
    await expect(signIns.first()).toBeVisible();
    await expect(signIns.first()).toContainText('Signed in');
    await expect(signIns.first()).toContainText('Succeeded');

    await field(page, 'Event type').selectOption('auth');
    await expect(page).toHaveURL(/[?&]type=auth(&|$)/);
    await settled(page);
    await field(page, 'Outcome').selectOption('succeeded');
    await expect(page).toHaveURL(/[?&]type=auth&outcome=succeeded$/);
    await settled(page);
    const check = async () => {
      const types = await rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-type') ?? ''));
      expect(types.length).toBeGreaterThan(0);
      expect(types.every((t) => t === 'auth' || t.startsWith('auth.'))).toBe(true);
      const outcomes = (await rows(page).locator('td:nth-child(4)').allInnerTexts()).map((t) => t.trim());
      expect(outcomes.every((o) => o.endsWith('Succeeded'))).toBe(true);
      await expect(rows(page).filter({ hasText: 'auth.login.succeeded' }).filter({ hasText: 'alex' }).first()).toBeVisible();
    };
    await check();

    await page.reload();
    await expect(page).toHaveURL(/[?&]type=auth&outcome=succeeded$/);
    await expect(field(page, 'Event type')).toHaveValue('auth');
    await expect(field(page, 'Outcome')).toHaveValue('succeeded');
    await check();

    // Back returns to the view before the outcome filter; forward restores it.
    await page.goBack();
    await expect(page).toHaveURL(/[?&]type=auth$/);
    await expect(field(page, 'Outcome')).toHaveValue('');
    await page.goForward();
    await expect(page).toHaveURL(/outcome=succeeded$/);
    await expect(field(page, 'Outcome')).toHaveValue('succeeded');

    // An actor filter: the text field applies on Enter.
    await field(page, 'Actor').fill('alex');
    await field(page, 'Actor').press('Enter');
    await expect(page).toHaveURL(/actor=alex/);
    await settled(page);
    const actors = (await rows(page).locator('td:nth-child(3)').allInnerTexts()).map((t) => t.trim());
    expect(actors.every((a) => a.startsWith('alex'))).toBe(true);

    // Nothing matches: the page says so, and one click clears the filters.
    await page.goto(`/audit?window=1h&type=token&actor=nobody-${RUN}`);
    const none = page.getByTestId('no-match');
    await expect(none).toContainText('No security events match these filters');
    await expect(none).toContainText(`actor nobody-${RUN}`);
    await page.screenshot({ path: `${SHOTS}/audit-no-match-1440.png` });
    await none.getByRole('button', { name: 'Clear all filters' }).click();
    await expect(page).toHaveURL(/\/audit$/);
    await expect(rows(page).first()).toBeVisible();
  });

  test('"Verify now" shows the trail intact with a row count, and the page shows it again after a reload', async ({ page }) => {
    await signIn(page, 'alex');
    await openAudit(page);
    await page.getByRole('button', { name: 'Verify now' }).click();
    await expect(badge(page).getByRole('button', { name: 'Verify now' })).toBeEnabled();
    await expect(badge(page)).toHaveAttribute('data-state', 'ok');
    await expect(badge(page)).toContainText(/Integrity: verified .+ — intact, [\d,]+ rows/);
    await expect(badge(page).getByRole('list', { name: 'Hash chains' })).toContainText(/permission_denials [\d,]+ rows?, head [0-9a-f]{12}…/);
    await expect(badge(page).getByRole('list', { name: 'Hash chains' })).toContainText(/security_events [\d,]+ rows?, head [0-9a-f]{12}…/);

    // The verification is itself an event, and the badge on a fresh load comes from it.
    await page.reload();
    await expect(badge(page)).toContainText(/Integrity: verified .+ — intact, [\d,]+ rows/);
    await expect(badge(page)).toContainText('Last run by alex');
    await expect(rows(page).filter({ hasText: 'audit.verified' }).first()).toContainText('Integrity verified');
  });

  test('a failed sign-in appears as auth.login.failed with outcome failed, and opens with its detail', async ({ page }) => {
    await signIn(page, 'alex');
    const intruder = `intruder-${RUN}`;
    const r = await page.request.post('/api/v1/auth/login', { data: { username: intruder, password: 'not-the-password' } });
    expect(r.status()).toBe(401);
    // The API agrees with the page.
    const api = await page.request.get(`/api/v1/audit/events?type=auth.login.failed&actor=${intruder}`, { headers: admin });
    expect(api.ok()).toBe(true);
    const events = ((await api.json()) as { events: { type: string; outcome: string; target: string }[] }).events;
    expect(events).toHaveLength(1);

    await openAudit(page, '?type=auth.login.failed');
    await expect(field(page, 'Event type')).toHaveValue('auth.login.failed');
    const row = rows(page).filter({ hasText: intruder });
    await expect(row).toHaveCount(1);
    await expect(row).toContainText('Sign-in failed');
    await expect(row).toContainText('auth.login.failed');
    await expect(row.locator('td:nth-child(4)')).toHaveText(/Failed/);

    // Keyboard: the first row is the tab stop; Enter opens, Escape closes and gives the focus back.
    await rows(page).first().focus();
    await row.focus();
    await page.keyboard.press('Enter');
    const panel = page.getByTestId('event-detail');
    await expect(panel).toBeVisible();
    await expect(panel.getByRole('heading', { name: /Event #\d+/ })).toBeFocused();
    await expect(page).toHaveURL(/event=\d+/);
    await expect(panel.getByTestId('event-detail-json')).toContainText('"reason": "wrong user name or password"');
    await expect(panel).toContainText(/Row hash\s*[0-9a-f]{64}/);
    await expect(panel).toContainText('Policy revision');
    await expect(panel).toContainText('Decision ID');
    await page.screenshot({ path: `${SHOTS}/audit-detail-1440.png` });

    // A link to the open event opens it again.
    await page.reload();
    await expect(page.getByTestId('event-detail')).toContainText(intruder);
    // The heading takes the focus once the page is live.
    await expect(page.getByTestId('event-detail').getByRole('heading', { name: /Event #\d+/ })).toBeFocused();
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('event-detail')).toHaveCount(0);
    await expect(page).not.toHaveURL(/event=/);
  });

  test('is refused to a viewer, and the refusal is recorded', async ({ page, request }) => {
    await signIn(page, 'victor');
    await page.goto('/audit?type=auth');
    await expect(page.getByRole('heading', { name: 'You do not have access to this page' })).toBeVisible();
    await expect(table(page)).toHaveCount(0);
    await expect(badge(page)).toHaveCount(0);
    const recorded = (await (await request.get('/api/v1/permissions/denials?rule_source=rbac:auditor&limit=20', { headers: admin })).json()) as {
      denials: { http_path: string; principal: string }[];
    };
    expect(recorded.denials.some((d) => d.http_path === '/audit' && d.principal === 'victor')).toBe(true);
  });

  test('reads well at 1440 and 390 pixels', async ({ page }) => {
    await signIn(page, 'alex');
    await openAudit(page);
    await page.getByRole('button', { name: 'Verify now' }).click();
    await expect(badge(page)).toHaveAttribute('aria-busy', 'false');
    await expect(badge(page)).toHaveAttribute('data-state', 'ok');
    await page.screenshot({ path: `${SHOTS}/audit-1440.png` });

    await page.setViewportSize({ width: 390, height: 844 });
    await expect(rows(page).first()).toBeVisible();
    // Nothing wider than the screen: the cards fit, nothing scrolls sideways.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${SHOTS}/audit-390.png` });
    await table(page).scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SHOTS}/audit-390-events.png` });
    await rows(page).first().click();
    await expect(page.getByTestId('event-detail')).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/audit-detail-390.png` });
  });

  test('"Older events" continues the same filter with the cursor', async ({ page }) => {
    await signIn(page, 'alex');
    // More events than one page holds: each read of the trail with a new filter is recorded (audit.queried).
    for (let i = 0; i < 55; i++) {
      const r = await page.request.get(`/api/v1/audit/events?actor=pager-${RUN}-${i}&limit=1`, { headers: admin });
      expect(r.ok()).toBe(true);
    }
    await openAudit(page, '?type=audit.queried&actor=admin');
    await expect(rows(page)).toHaveCount(50);
    await page.getByRole('button', { name: 'Older events' }).click();
    await expect.poll(() => rows(page).count()).toBeGreaterThan(55);
    const ids = await rows(page).evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-event-id'))));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const types = await rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-type')));
    expect(types.every((t) => t === 'audit.queried')).toBe(true);
    // The oldest of the 55 is on the second page; open it to see the filter it read.
    const oldest = rows(page).filter({ has: page.locator(`xpath=.//*[contains(text(), "security_events")]`) }).nth(54);
    await oldest.click();
    await expect(page.getByTestId('event-detail-json')).toContainText(`"actor": "pager-${RUN}-0"`);
  });
});
