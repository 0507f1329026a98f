import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { nextTailPoll } from './fixtures/live-tail';
import { E2E } from './fixtures/accounts';
import { signIn } from './fixtures/session';

/**
 * The explorers read well by keyboard, on a phone and under quick changes (issue 24): a "Skip to results" link first
 * in the page's content, arrow keys between denials in the open panel, the results first on a 390-pixel phone with
 * the filters behind a button, the last of two quick filter changes on /audit winning, the decisions logged by
 * decision_log_all (on in the e2e server's bfsi profile) kept apart from the security events, and the explorers'
 * own polling not logged as decisions.
 */
const admin = { authorization: `Bearer ${E2E.adminToken}` };
const RUN = `kb${Date.now().toString(36)}`;
const SHOTS = 'test-results/screens';

async function deny(request: APIRequestContext, marker: string): Promise<void> {
  const r = await request.post('/api/v1/permissions/check', { headers: admin, data: { agent: 'shadow_agent', tool: 'web_fetch', arguments: { url: `https://example.test/${marker}` } } });
  expect(((await r.json()) as { decision: string }).decision).toBe('DENY');
}

const denialTable = (page: Page) => page.getByRole('table', { name: 'Denials' });
const denialRows = (page: Page) => denialTable(page).locator('tbody tr');
const eventTable = (page: Page) => page.getByRole('table', { name: 'Security events' });
const eventRows = (page: Page) => eventTable(page).locator('tbody tr');
const auditField = (page: Page, name: string) => page.getByRole('search', { name: 'Filter security events' }).getByLabel(name, { exact: true });

/** Tab presses (and the Enter on each skip link) until the focus is on a row of `table`; the number of Tabs. */
async function tabsToFirstRow(page: Page, rowSelector: string): Promise<number> {
  let tabs = 0;
  for (; tabs < 60; ) {
    await page.keyboard.press('Tab');
    tabs++;
    const focused = await page.evaluate(() => ({ text: document.activeElement?.textContent?.trim() ?? '', tag: document.activeElement?.tagName ?? '' }));
    if (focused.tag === 'A' && /^Skip to (content|results)$/.test(focused.text)) {
      await page.keyboard.press('Enter');
    }
    if (await page.evaluate((sel) => document.activeElement?.matches(sel) ?? false, rowSelector)) return tabs;
  }
  return tabs;
}

/** The top of an element in the page (not the viewport), in CSS pixels. */
const pageTop = (page: Page, selector: string) => page.locator(selector).first().evaluate((el) => Math.round(el.getBoundingClientRect().top + window.scrollY));

test.beforeAll(async ({ request }) => {
  for (let i = 0; i < 3; i++) await deny(request, `${RUN}-${i}`);
});

test.describe('keyboard', () => {
  test.use({ viewport: { width: 1440, height: 960 } });

  test('/denials: two Tab presses reach the first denial row; Up/Down and j/k move between denials in the open panel', async ({ page }) => {
    await signIn(page, 'alex');
    await page.goto('/denials');
    await expect(denialRows(page).first()).toBeVisible();
    await expect(denialTable(page)).toHaveAttribute('aria-busy', 'false');
    const tabs = await tabsToFirstRow(page, 'table[aria-label="Denials"] tbody tr');
    expect(tabs).toBe(2);
    const ids = await denialRows(page).evaluateAll((trs) => trs.slice(0, 3).map((tr) => tr.getAttribute('data-denial-id')));
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(new RegExp(`denial=${ids[0]}`));
    const panel = page.getByTestId('denial-detail');
    await expect(panel.getByRole('heading', { name: `Denial #${ids[0]}` })).toBeFocused();
    await page.keyboard.press('ArrowDown');
    await expect(panel.getByRole('heading', { name: `Denial #${ids[1]}` })).toBeVisible();
    await expect(page).toHaveURL(new RegExp(`denial=${ids[1]}`));
    await page.keyboard.press('j');
    await expect(panel.getByRole('heading', { name: `Denial #${ids[2]}` })).toBeVisible();
    await page.keyboard.press('ArrowUp');
    await expect(panel.getByRole('heading', { name: `Denial #${ids[1]}` })).toBeVisible();
    await page.keyboard.press('k');
    await expect(panel.getByRole('heading', { name: `Denial #${ids[0]}` })).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/denials-1440-panel.png` });
  });

  test('/audit: two Tab presses reach the first event row; arrows move in the open panel', async ({ page }) => {
    await signIn(page, 'alex');
    await page.goto('/audit');
    await expect(eventRows(page).first()).toBeVisible();
    const tabs = await tabsToFirstRow(page, 'table[aria-label="Security events"] tbody tr');
    expect(tabs).toBe(2);
    const ids = await eventRows(page).evaluateAll((trs) => trs.slice(0, 2).map((tr) => tr.getAttribute('data-event-id')));
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('event-detail').getByRole('heading', { name: `Event #${ids[0]}` })).toBeFocused();
    await page.keyboard.press('ArrowDown');
    await expect(page.getByTestId('event-detail').getByRole('heading', { name: `Event #${ids[1]}` })).toBeVisible();
  });
});

test.describe('/audit reads well', () => {
  test.use({ viewport: { width: 1440, height: 960 } });

  test('logged decisions are their own view; the security events are the default', async ({ page }) => {
    await signIn(page, 'alex');
    await page.goto('/audit');
    await expect(eventRows(page).first()).toBeVisible();
    await expect(page.getByTestId('decisions-apart')).toBeVisible();
    expect(await eventTable(page).locator('tbody tr[data-type^="decision."]').count()).toBe(0);
    await page.screenshot({ path: `${SHOTS}/audit-1440.png`, fullPage: true });
    await page.getByTestId('decisions-apart').getByRole('button', { name: 'Show logged decisions' }).click();
    await expect(page).toHaveURL(/[?&]type=decision(&|$)/);
    await expect(eventTable(page)).toHaveAttribute('aria-busy', 'false');
    await expect(eventRows(page).first()).toHaveAttribute('data-type', /^decision\./);
  });

  test('two quick filter changes: the last choice wins and the rows match it', async ({ page }) => {
    test.setTimeout(60_000);
    await signIn(page, 'alex');
    await page.goto('/audit');
    await expect(eventRows(page).first()).toBeVisible();
    // Outcome, then the type while the first change is still loading: the server's answers (the events of each new
    // view, read from the API) are held until both choices are made (a slow server, made certain). The fields show the
    // choices while they load, and both stay.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let heldRequests = 0;
    const isEventsRead = (url: URL) => url.pathname === '/api/v1/audit/events';
    await page.route(isEventsRead, async (route) => {
      heldRequests++;
      await held;
      // The page drops (aborts) the read of a view it has left: that request has nowhere to go on to.
      await route.continue().catch(() => undefined);
    });
    await auditField(page, 'Outcome').selectOption('succeeded');
    await expect.poll(() => heldRequests).toBeGreaterThan(0);
    await expect(auditField(page, 'Outcome')).toHaveValue('succeeded');
    await auditField(page, 'Event type').selectOption('auth');
    await expect(auditField(page, 'Event type')).toHaveValue('auth');
    await expect(auditField(page, 'Outcome')).toHaveValue('succeeded');
    release();
    await expect(page).toHaveURL(/[?&]type=auth&outcome=succeeded$/);
    await expect(eventTable(page)).toHaveAttribute('aria-busy', 'false');
    await page.unroute(isEventsRead);
    await expect(auditField(page, 'Outcome')).toHaveValue('succeeded');
    await expect(auditField(page, 'Event type')).toHaveValue('auth');
    await expect(eventRows(page).first()).toBeVisible();
    for (const row of await eventRows(page).locator('td:nth-child(4)').allInnerTexts()) expect(row).toContain('Succeeded');
    for (const type of await eventRows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-type') ?? ''))) expect(type).toMatch(/^auth\./);
    // The outcome three times in a row: the last one is the view.
    await auditField(page, 'Outcome').selectOption('failed');
    await auditField(page, 'Outcome').selectOption('refused');
    await auditField(page, 'Outcome').selectOption('succeeded');
    await expect(auditField(page, 'Outcome')).toHaveValue('succeeded');
    await expect(page).toHaveURL(/[?&]type=auth&outcome=succeeded$/);
    await expect(eventTable(page)).toHaveAttribute('aria-busy', 'false');
    await expect(eventRows(page).first()).toBeVisible();
    for (const outcome of await eventRows(page).locator('td:nth-child(4)').allInnerTexts()) expect(outcome).toContain('Succeeded');
    // The actor applies as it is typed, like the other filters (no separate Apply).
    await auditField(page, 'Actor').fill('alex');
    await expect(page).toHaveURL(/[?&]actor=alex(&|$)/);
  });

  test("the explorers' own polling is not logged as decisions", async ({ page, request }) => {
    await signIn(page, 'alex');
    let polled = 0;
    page.on('response', (r) => {
      if (r.url().includes('/api/v1/permissions/denials/tail') && !r.url().includes('newest=1') && r.ok()) polled++;
    });
    await page.clock.install();
    await page.goto('/denials');
    await expect(denialRows(page).first()).toBeVisible();
    // Two polls of the live tail, each sent with x-swarm-background: 1.
    await nextTailPoll(page);
    await nextTailPoll(page);
    await expect.poll(() => polled).toBeGreaterThanOrEqual(2);
    const logged = await request.get('/api/v1/audit/events?type=decision.allowed&actor=alex&limit=1000', { headers: admin });
    const targets = ((await logged.json()) as { events: { target: string | null }[] }).events.map((e) => e.target ?? '');
    expect(targets.filter((t) => t.includes('/denials/tail'))).toEqual([]);
    // The person's own reads are logged (decision_log_all is on): the page's list read is there.
    expect(targets.some((t) => t.startsWith('GET /api/v1/permissions/denials'))).toBe(true);
  });
});

test.describe('on a 390-pixel phone', () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test('/denials: the rows come first, the filters behind a Filters button that a keyboard opens', async ({ page }) => {
    await signIn(page, 'alex');
    await page.goto('/denials');
    await expect(denialRows(page).first()).toBeVisible();
    await expect(page.getByTestId('filters-toggle')).toBeVisible();
    await expect(page.getByTestId('summary')).toHaveAttribute('aria-busy', 'false');
    const rowTop = await pageTop(page, 'table[aria-label="Denials"] tbody tr');
    const summaryTop = await pageTop(page, '[data-testid="summary"]');
    test.info().annotations.push({ type: 'first denial row top (px)', description: String(rowTop) });
    console.log(`390 px: first denial row top ${rowTop} px, summary top ${summaryTop} px`);
    expect(rowTop).toBeLessThan(summaryTop);
    expect(rowTop).toBeLessThan(844);
    const form = page.getByRole('search', { name: 'Filter denials' });
    await expect(form).toBeHidden();
    await page.screenshot({ path: `${SHOTS}/denials-390.png`, fullPage: true });
    await page.screenshot({ path: `${SHOTS}/denials-390-top.png` });
    const toggle = page.getByTestId('filters-toggle');
    await expect(toggle).toHaveAttribute('aria-expanded', 'false');
    await toggle.focus();
    await page.keyboard.press('Enter');
    await expect(toggle).toHaveAttribute('aria-expanded', 'true');
    await expect(form).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/denials-390-filters.png`, fullPage: true });
  });

  test('/audit: the events come first, the filters behind a Filters button', async ({ page }) => {
    await signIn(page, 'alex');
    await page.goto('/audit');
    await expect(eventRows(page).first()).toBeVisible();
    // The phone layout is taken once the page has hydrated and measured the screen: the Filters button says it has.
    await expect(page.getByTestId('filters-toggle')).toBeVisible();
    const rowTop = await pageTop(page, 'table[aria-label="Security events"] tbody tr');
    console.log(`390 px: first audit event row top ${rowTop} px`);
    expect(rowTop).toBeLessThan(844);
    await expect(page.getByRole('search', { name: 'Filter security events' })).toBeHidden();
    await page.screenshot({ path: `${SHOTS}/audit-390.png`, fullPage: true });
    await page.screenshot({ path: `${SHOTS}/audit-390-top.png` });
    await page.getByTestId('filters-toggle').press('Enter');
    await expect(page.getByRole('search', { name: 'Filter security events' })).toBeVisible();
  });
});
