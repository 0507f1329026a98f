import { readFileSync } from 'node:fs';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { nextTailPoll } from './fixtures/live-tail';
import { E2E } from './fixtures/accounts';
import { signIn, signInWithForm } from './fixtures/session';

/**
 * The denial explorer against the built server. The server's database holds a seeded history (three weeks before
 * yesterday, see scripts/e2e-server.ts); each run adds fresh denials through the real check API.
 */
const admin = { authorization: `Bearer ${E2E.adminToken}` };
const RUN = `e2e${Date.now().toString(36)}`;
const SHOTS = 'test-results/screens';

async function deny(request: APIRequestContext, agent: string, tool: string, args: Record<string, unknown>): Promise<void> {
  const r = await request.post('/api/v1/permissions/check', { headers: admin, data: { agent, tool, arguments: args } });
  expect(r.ok()).toBe(true);
  expect(((await r.json()) as { decision: string }).decision).toBe('DENY');
}

test.beforeAll(async ({ request }) => {
  // Three real denials, one per family the auditor asks about: an unlisted tool, a YAML rule, a flag that is off.
  await deny(request, 'data_cleaner', 'deploy_serving', { model_id: `m-${RUN}`, env: 'prod' });
  await deny(request, 'trainer', 'tune_hyperparameters', { model_id: `m-${RUN}`, trials: 500 });
  await deny(request, 'evaluator', 'grade_with_llm', { model_id: `m-${RUN}`, api_key: 'sk-live-must-not-show' });
});

const table = (page: Page) => page.getByRole('table', { name: 'Denials' });
/** A field of the filter form (the column menu has checkboxes with the same names). */
const field = (page: Page, name: string) => page.getByRole('search', { name: 'Filter denials' }).getByLabel(name, { exact: true });
/** The rows on screen belong to the URL (not to the previous view, which stays dimmed while the next one loads). */
const settled = async (page: Page) => expect(table(page)).toHaveAttribute('aria-busy', 'false');
/** Cards and chart too, before a screenshot. */
async function allSettled(page: Page): Promise<void> {
  await expect(page.getByTestId('summary')).toHaveAttribute('aria-busy', 'false');
  await expect(page.getByRole('region', { name: 'Denials over time' })).toHaveAttribute('aria-busy', 'false');
}
const rows = (page: Page) => table(page).locator('tbody tr');
async function column(page: Page, index: number): Promise<string[]> {
  await settled(page);
  return (await rows(page).locator(`td:nth-child(${index})`).allInnerTexts()).map((t) => t.trim());
}

async function openExplorer(page: Page, query = ''): Promise<void> {
  await page.goto(`/denials${query}`);
  await expect(page.getByRole('heading', { level: 1, name: 'Denials' })).toBeVisible();
  await expect(rows(page).first()).toBeVisible();
  await expect(page.getByTestId('summary-total')).toBeVisible();
  await settled(page);
}

test.describe('the denial explorer', () => {
  // An auditor's screen, for the screenshots.
  test.use({ viewport: { width: 1440, height: 960 } });

  test('shows the denials with summary cards and a chart, and filters by agent', async ({ page }) => {
    await signIn(page, 'alex');
    await openExplorer(page);
    await expect(page.getByRole('group', { name: /Denials over time/ })).toBeVisible();
    await expect(page.getByRole('region', { name: 'Top agents' })).toContainText('data_cleaner');
    await allSettled(page);
    await page.screenshot({ path: `${SHOTS}/denials-overview.png` });

    await field(page, 'Agent').fill('data_cleaner');
    await field(page, 'Agent').press('Enter');
    await expect(page).toHaveURL(/[?&]agent=data_cleaner/);
    await expect(rows(page).first()).toContainText('data_cleaner');
    const agents = await column(page, 2);
    expect(agents.length).toBeGreaterThan(0);
    expect(agents.every((a) => a === 'data_cleaner')).toBe(true);
    await expect(page.getByRole('region', { name: 'Top agents' }).getByRole('listitem')).toHaveCount(1);
    await allSettled(page);
    await page.screenshot({ path: `${SHOTS}/denials-agent.png` });
  });

  test('filters by a rule-source family from the legend and by one rule from its badge; back and forward restore each view', async ({ page }) => {
    await signIn(page, 'alex');
    await openExplorer(page);
    await page.getByRole('list', { name: 'Rule-source families' }).getByRole('button', { name: 'policy', exact: true }).click();
    await expect(page).toHaveURL(/rule_source=policy(&|$)/);
    await expect(field(page, 'Rule source')).toHaveValue('policy');
    await expect(rows(page).first()).toContainText('policy:');
    const rules = await column(page, 4);
    expect(rules.every((r) => r.startsWith('policy:'))).toBe(true);
    expect(new Set(rules).size).toBeGreaterThan(1);

    await table(page).getByRole('button', { name: 'policy:bfsi/tuning-capacity-review' }).first().click();
    await expect(page).toHaveURL(/rule_source=policy:bfsi\/tuning-capacity-review/);
    await expect(rows(page).first()).toContainText('policy:bfsi/tuning-capacity-review');
    expect((await column(page, 4)).every((r) => r === 'policy:bfsi/tuning-capacity-review')).toBe(true);

    await page.goBack();
    await expect(page).toHaveURL(/rule_source=policy(&|$)/);
    await expect(field(page, 'Rule source')).toHaveValue('policy');
    await page.goBack();
    await expect(page).toHaveURL(/\/denials$/);
    await expect(field(page, 'Rule source')).toHaveValue('');
    await page.goForward();
    await expect(field(page, 'Rule source')).toHaveValue('policy');
  });

  test('narrows by time window, says when nothing matches and offers to clear', async ({ page }) => {
    await signIn(page, 'alex');
    // report_bot only appears in the seeded history, more than a day old.
    await openExplorer(page, '?agent=report_bot');
    const allTime = Number((await page.getByTestId('summary-total').innerText()).replace(/,/g, ''));
    expect(allTime).toBeGreaterThan(0);

    await page.getByRole('group', { name: 'Time window' }).getByRole('button', { name: '24 hours' }).click();
    await expect(page).toHaveURL(/window=24h/);
    const empty = page.getByTestId('no-match');
    await expect(empty).toContainText('No denials match these filters');
    await expect(empty).toContainText('agent report_bot');
    await allSettled(page);
    await page.screenshot({ path: `${SHOTS}/denials-no-match.png`, fullPage: true });

    await empty.getByRole('button', { name: 'Search all time instead' }).click();
    await expect(page).not.toHaveURL(/window=/);
    await expect(page.getByTestId('summary-total')).toHaveText(allTime.toLocaleString('en-US'));

    await page.getByRole('group', { name: 'Time window' }).getByRole('button', { name: '30 days' }).click();
    await expect(page).toHaveURL(/window=30d/);
    await expect(rows(page).first()).toContainText('report_bot');

    // A bar of the chart narrows the window to itself: with the keyboard, the newest non-empty bar.
    await allSettled(page);
    const bar = page.locator('svg g[role="button"][aria-disabled="false"]').last();
    await bar.focus();
    await expect(page.getByTestId('chart-tooltip')).toContainText('agent_allowlist');
    await page.getByRole('region', { name: 'Denials over time' }).screenshot({ path: `${SHOTS}/denials-chart-focus.png` });
    await bar.click();
    await expect(page).toHaveURL(/from=.*&to=/);
    await expect(page.getByRole('group', { name: 'Time window' }).getByRole('button', { name: 'Custom range' })).toHaveAttribute('aria-pressed', 'true');
    await expect(rows(page).first()).toContainText('report_bot');

    await page.getByRole('button', { name: 'Clear all', exact: true }).click();
    await expect(page).toHaveURL(/\/denials$/);
  });

  test('takes a custom range from the form, in local time', async ({ page }) => {
    await signIn(page, 'alex');
    await openExplorer(page);
    await page.getByRole('group', { name: 'Time window' }).getByRole('button', { name: 'Custom range' }).click();
    const form = page.getByRole('form', { name: 'Custom range' });
    const day = (offset: number) => {
      const d = new Date(Date.now() - offset * 86400_000);
      const p = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
    };
    await form.getByLabel('From (local time)').fill(day(10));
    await form.getByLabel('To (local time)').fill(day(3));
    await page.screenshot({ path: `${SHOTS}/denials-custom-range.png` });
    await form.getByRole('button', { name: 'Apply range' }).click();
    await expect(page).toHaveURL(/from=\d{4}-\d\d-\d\dT[\d:]+Z&to=/);
    await settled(page);
    const from = Date.now() - 10 * 86400_000 - 60_000;
    const to = Date.now() - 3 * 86400_000 + 60_000;
    const inWindow = (t: string) => {
      const ms = new Date(t.replace(' ', 'T')).getTime();
      return ms >= from && ms <= to;
    };
    // The rows of the range replace those of the view before it (the table can show the old rows for a moment after the
    // URL changed); then every row is inside the range.
    await expect.poll(async () => (await column(page, 1)).filter((t) => !inWindow(t)), { timeout: 10_000 }).toEqual([]);
    expect((await column(page, 1)).length).toBeGreaterThan(0);
  });

  test('tells the reader about new denials without moving the rows under them', async ({ page, request }) => {
    test.setTimeout(60_000);
    await signIn(page, 'alex');
    await page.clock.install();
    await openExplorer(page, '?agent=trainer');
    const before = await rows(page).first().getAttribute('data-denial-id');
    await deny(request, 'trainer', 'tune_hyperparameters', { model_id: `m-late-${Date.now()}`, trials: 1000 });
    const notice = page.getByTestId('live-tail');
    await nextTailPoll(page);
    await expect(notice).toContainText('1 new denial since this view loaded');
    await expect(rows(page).first()).toHaveAttribute('data-denial-id', before ?? 'missing');
    await notice.getByRole('button', { name: 'Show it' }).click();
    await expect(rows(page).first()).toContainText('tune_hyperparameters');
    await expect(rows(page).first()).not.toHaveAttribute('data-denial-id', before ?? 'missing');
    await expect(notice).toHaveText('');
  });

  test('a shared URL opens the same view, with the same denial open, in a fresh browser', async ({ page, browser }) => {
    await signIn(page, 'alex');
    await openExplorer(page, '?window=7d&agent=trainer&rule_source=policy');
    // The time cell: a click on the badge would filter instead of opening.
    await rows(page).first().locator('td').first().click();
    await expect(page.getByTestId('denial-detail')).toBeVisible();
    await expect(page).toHaveURL(/denial=\d+/);
    const shared = page.url();
    const firstId = await rows(page).first().getAttribute('data-denial-id');

    const context = await browser.newContext();
    try {
      const other = await context.newPage();
      await other.goto(shared);
      await expect(other).toHaveURL(/\/login\?next=/);
      await signInWithForm(other, 'olivia');
      await expect(other).toHaveURL(shared);
      await expect(field(other, 'Agent')).toHaveValue('trainer');
      await expect(field(other, 'Rule source')).toHaveValue('policy');
      await expect(other.getByRole('group', { name: 'Time window' }).getByRole('button', { name: '7 days' })).toHaveAttribute('aria-pressed', 'true');
      await expect(rows(other).first()).toHaveAttribute('data-denial-id', firstId ?? 'missing');
      await expect(other.getByTestId('denial-detail')).toContainText('tune_hyperparameters');
    } finally {
      await context.close();
    }
  });

  test('opens a denial with the keyboard, shows its arguments redacted and its trace, and closes with Escape', async ({ page }) => {
    await signIn(page, 'alex');
    await openExplorer(page, `?q=${RUN}`);
    await expect(rows(page)).toHaveCount(3);
    // Newest first: the evaluator's denial was recorded last.
    const target = rows(page).first();
    await expect(target).toContainText('grade_with_llm');
    // The table is one tab stop: focus a row, move with the arrows, open with Enter.
    await target.focus();
    await page.keyboard.press('ArrowDown');
    await expect(rows(page).nth(1)).toBeFocused();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await expect(rows(page).nth(2)).toBeFocused();
    await page.keyboard.press('Home');
    await expect(target).toBeFocused();
    await page.keyboard.press('Enter');
    const panel = page.getByTestId('denial-detail');
    await expect(panel).toBeVisible();
    await expect(panel.getByRole('heading', { name: /Denial #\d+/ })).toBeFocused();
    const args = panel.getByTestId('denial-arguments');
    await expect(args).toContainText(`"model_id": "m-${RUN}"`);
    await expect(args).toContainText('redacted');
    await expect(args).not.toContainText('sk-live-must-not-show');
    await expect(panel).toContainText('flag:evaluator_grading');
    await expect(panel.getByRole('list').last()).toContainText('decided');
    await allSettled(page);
    await page.screenshot({ path: `${SHOTS}/denials-detail.png`, fullPage: false });

    await page.keyboard.press('Escape');
    await expect(panel).toHaveCount(0);
    await expect(target).toBeFocused();
    await expect(page).not.toHaveURL(/denial=/);
  });

  test('exports the current filter as CSV identical to the API answer, and as JSON lines', async ({ page, request }) => {
    await signIn(page, 'alex');
    await openExplorer(page, '?agent=trainer');
    const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
    const csv = readFileSync((await csvDownload.path())!, 'utf8');
    const api = await (await request.get('/api/v1/permissions/denials?agent=trainer&format=csv', { headers: admin })).text();
    expect(csv).toBe(api);
    const lines = csv.trim().split('\r\n');
    expect(lines[0]).toMatch(/^id,timestamp,timestamp_iso,tool_call_id,tool_name,agent_name/);
    expect(lines.length - 1).toBe(Number((await page.getByTestId('summary-total').innerText()).replace(/,/g, '')));

    const [jsonDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export JSON' }).click()]);
    // The first record names the export's window and row count (README, Exports); the denials follow.
    const [meta, ...json] = readFileSync((await jsonDownload.path())!, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: number; agent_name: string; export?: { rows: number } });
    expect(meta?.export?.rows).toBe(lines.length - 1);
    expect(json.map((r) => r.id)).toEqual(lines.slice(1).map((l) => Number(l.split(',')[0])));
    expect(json.every((r) => r.agent_name === 'trainer')).toBe(true);
  });

  test('sorts on the server by a column and pages with the cursor', async ({ page }) => {
    await signIn(page, 'alex');
    await openExplorer(page, '?size=25');
    await table(page).getByRole('button', { name: /^Agent/ }).click();
    await expect(page).toHaveURL(/sort=agent_name&order=asc/);
    await expect(table(page).getByRole('columnheader', { name: /Agent/ })).toHaveAttribute('aria-sort', 'ascending');
    // No agent (an HTTP denial) sorts first, as SQLite orders NULL.
    const agentsOf = async () => (await column(page, 2)).map((a) => (a === '—' ? '' : a));
    const first = await agentsOf();
    expect(first).toEqual([...first].sort());
    await page.evaluate(() => {
      document.getElementById('results-title')?.scrollIntoView({ block: 'start' });
      window.scrollBy(0, -24);
    });
    await page.screenshot({ path: `${SHOTS}/denials-table-sorted.png` });
    const idsOf = async () => rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-denial-id')));
    const firstIds = await idsOf();
    await page.getByRole('button', { name: 'Next ›' }).click();
    await expect(page).toHaveURL(/cursor=.+&page=2/);
    await expect(page.getByText('Page 2')).toBeVisible();
    // The URL changes before the rows do: wait for the second page's rows, not for the address bar.
    await expect.poll(async () => (await idsOf())[0]).not.toBe(firstIds[0]);
    const second = await agentsOf();
    expect(second[0]! >= first[first.length - 1]!).toBe(true);
    expect((await idsOf()).some((id) => firstIds.includes(id))).toBe(false);
    await page.getByRole('button', { name: '‹ Previous' }).click();
    await expect(page).not.toHaveURL(/cursor=/);
    await expect.poll(idsOf).toEqual(firstIds);
    expect(await agentsOf()).toEqual(first);
  });

  test('remembers hidden columns in this browser', async ({ page }) => {
    await signIn(page, 'alex');
    await openExplorer(page);
    await page.getByText('Columns', { exact: true }).click();
    await page.getByLabel('Reason', { exact: true }).uncheck();
    await page.getByLabel('Tool call ID', { exact: true }).check();
    await page.getByRole('group', { name: 'Show columns' }).screenshot({ path: `${SHOTS}/denials-columns.png` });
    await page.keyboard.press('Escape');
    await expect(page.getByRole('group', { name: 'Show columns' })).toBeHidden();
    await expect(table(page).getByRole('columnheader', { name: 'Reason' })).toHaveCount(0);
    await page.reload();
    await expect(rows(page).first()).toBeVisible();
    await expect(table(page).getByRole('columnheader', { name: 'Reason' })).toHaveCount(0);
    await expect(table(page).getByRole('columnheader', { name: 'Tool call ID' })).toBeVisible();
    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('button', { name: 'Reset to default' }).click();
    await expect(table(page).getByRole('columnheader', { name: 'Reason' })).toBeVisible();
  });

  test('says so when the server fails, and recovers on retry', async ({ page }) => {
    await signIn(page, 'alex');
    let fail = true;
    // The list is held until the loading state has been seen, then fails; the summary, the chart and the poll for new
    // denials (limit=1) still answer.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const isList = (url: URL) => url.pathname === '/api/v1/permissions/denials' && url.searchParams.get('limit') !== '1';
    await page.route(isList, async (route) => {
      if (fail) {
        await held;
        await route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ error: { code: 'INTERNAL', message: 'Something went wrong on the server; it has been logged.' } }) });
      } else {
        await route.continue();
      }
    });
    await page.goto('/denials');
    await expect(page.getByLabel('Loading denials')).toBeVisible();
    await page.screenshot({ path: `${SHOTS}/denials-loading.png` });
    release();
    const alert = page.getByRole('alert').filter({ hasText: 'The denials could not be loaded' });
    await expect(alert).toContainText('Something went wrong on the server');
    await allSettled(page);
    await page.screenshot({ path: `${SHOTS}/denials-error.png`, fullPage: true });
    fail = false;
    await alert.getByRole('button', { name: 'Try again' }).click();
    await expect(rows(page).first()).toBeVisible();
  });

  test('is refused to a viewer, and the refusal is recorded', async ({ page, request }) => {
    await signIn(page, 'victor');
    await page.goto('/denials?agent=trainer');
    await expect(page.getByRole('heading', { name: 'You do not have access to this page' })).toBeVisible();
    await expect(page.getByRole('table', { name: 'Denials' })).toHaveCount(0);
    await page.screenshot({ path: `${SHOTS}/denials-viewer-refused.png` });
    const viewerApi = await page.request.get('/api/v1/permissions/denials/summary');
    expect(viewerApi.status()).toBe(403);
    const recorded = (await (await request.get('/api/v1/permissions/denials?rule_source=rbac:auditor&limit=20', { headers: admin })).json()) as {
      denials: { http_path: string; principal: string }[];
    };
    expect(recorded.denials.some((d) => d.http_path === '/denials' && d.principal === 'victor')).toBe(true);
    expect(recorded.denials.some((d) => d.http_path === '/api/v1/permissions/denials/summary' && d.principal === 'victor')).toBe(true);
  });
});

test.describe('the denial explorer as a log explorer', () => {
  test.use({ viewport: { width: 1440, height: 960 } });

  test('suggests agents present in the window with counts, by keyboard, undeclared ones included', async ({ page, request }) => {
    await deny(request, 'shadow_agent', 'web_fetch', { url: `https://example.com/${RUN}` });
    await signIn(page, 'alex');
    await openExplorer(page, '?window=24h');
    const agent = field(page, 'Agent');
    await agent.focus();
    await agent.pressSequentially('SH');
    const list = page.getByRole('listbox', { name: /Agent values/ });
    await expect(list.getByRole('option', { name: /shadow_agent/ })).toBeVisible();
    await expect(list.getByRole('option', { name: /shadow_agent/ })).toContainText(/\d/);
    await agent.press('ArrowDown');
    await expect(agent).toHaveAttribute('aria-activedescendant', /opt-0/);
    await page.screenshot({ path: `${SHOTS}/denials-facets.png` });
    await agent.press('Enter');
    await expect(page).toHaveURL(/[?&]agent=shadow_agent/);
    await settled(page);
    expect((await column(page, 2)).every((a) => a === 'shadow_agent')).toBe(true);
    // A prefix typed and applied without picking matches too.
    await agent.fill('shad');
    await agent.press('Escape');
    await agent.press('Enter');
    await expect(page).toHaveURL(/[?&]agent=shad(&|$)/);
    await settled(page);
    expect((await column(page, 2)).every((a) => a === 'shadow_agent')).toBe(true);
  });

  test('announces new denials without moving the rows, and shows them on request', async ({ page, request }) => {
    await signIn(page, 'alex');
    await page.clock.install();
    await openExplorer(page, '?window=1h');
    const before = await rows(page).first().getAttribute('data-denial-id');
    const tail = `tail${RUN}`;
    await deny(request, 'shadow_agent', 'web_fetch', { url: tail });
    await deny(request, 'shadow_agent', 'web_fetch', { url: `${tail}-2` });
    const notice = page.getByTestId('live-tail');
    await nextTailPoll(page);
    await expect(notice).toContainText(/2 new denials/);
    // Nothing moved under the reader's eyes.
    await expect(rows(page).first()).toHaveAttribute('data-denial-id', before ?? 'missing');
    await page.screenshot({ path: `${SHOTS}/denials-live-tail.png` });
    await notice.getByRole('button', { name: /Show them/ }).click();
    await expect(rows(page).first()).not.toHaveAttribute('data-denial-id', before ?? 'missing');
    await expect(rows(page).first()).toContainText('shadow_agent');
    await expect(notice).toHaveText('');
  });

  test('copies a link pinned to the exact window, which opens the same rows later', async ({ page, context }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await signIn(page, 'alex');
    await openExplorer(page, '?window=24h&agent=trainer');
    await page.getByTestId('copy-exact-link').click();
    const shown = page.getByTestId('copied-link');
    await expect(shown).toBeVisible();
    const url = (await shown.locator('code').innerText()).trim();
    expect(url).toMatch(/\/denials\?from=\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z&to=\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z&agent=trainer&until_id=\d+$/);
    expect(url).not.toContain('window=');
    const from = Date.parse(new URL(url).searchParams.get('from')!);
    const to = Date.parse(new URL(url).searchParams.get('to')!);
    expect(Math.abs(to - from - 86_400_000)).toBeLessThan(2000);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    await page.goto(url);
    await expect(page.getByRole('group', { name: 'Time window' }).getByRole('button', { name: 'Custom range' })).toHaveAttribute('aria-pressed', 'true');
    await expect(rows(page).first()).toContainText('trainer');
  });

  test('finds a path segment and a line copied from the detail panel', async ({ page }) => {
    await signIn(page, 'alex');
    await openExplorer(page, `?q=${encodeURIComponent('"trials": 500')}&agent=trainer`);
    await expect(rows(page).first()).toContainText('tune_hyperparameters');
  });

  test('fits the table on a 1440-pixel screen, gives the reason the width, and opens a row from its badge', async ({ page }) => {
    await signIn(page, 'alex');
    await openExplorer(page);
    await allSettled(page);
    const wrap = table(page).locator('xpath=..');
    const fits = await wrap.evaluate((el) => el.scrollWidth <= el.clientWidth + 1);
    expect(fits).toBe(true);
    const widths = await table(page).locator('thead th').evaluateAll((ths) => ths.map((th) => [th.textContent ?? '', th.getBoundingClientRect().width] as const));
    const reason = widths.find(([t]) => t.startsWith('Reason'))![1];
    expect(Math.max(...widths.map(([, w]) => w))).toBe(reason);
    await page.screenshot({ path: `${SHOTS}/denials-1440.png`, fullPage: true });
    // A click on the badge itself opens the row; the funnel beside it is the filter.
    const first = rows(page).first();
    const id = await first.getAttribute('data-denial-id');
    await first.locator('td').nth(3).locator('.badge').click();
    await expect(page).toHaveURL(new RegExp(`denial=${id}`));
    await expect(page.getByTestId('denial-detail')).toBeVisible();
  });

  test('on a 390-pixel phone: nothing to scroll sideways for, a denial opens and reads whole, the filters behind a button narrow the rows', async ({ page }) => {
    const WIDTH = 390;
    await page.setViewportSize({ width: WIDTH, height: 844 });
    await signIn(page, 'alex');
    await openExplorer(page);
    await allSettled(page);
    await page.screenshot({ path: `${SHOTS}/denials-390.png`, fullPage: true });
    const wide = () => page.evaluate(() => document.documentElement.scrollWidth);
    expect(await wide()).toBeLessThanOrEqual(WIDTH);

    // A tap on a row opens it: its tool, its reason and its arguments inside the screen's width.
    const first = rows(page).first();
    const tool = (await first.locator('td').nth(2).innerText()).trim();
    await first.locator('td').first().click();
    const panel = page.getByTestId('denial-detail');
    await expect(panel).toBeVisible();
    await expect(page).toHaveURL(/denial=\d+/);
    await expect(panel).toContainText(tool);
    const box = (await panel.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(WIDTH + 1);
    expect(await wide()).toBeLessThanOrEqual(WIDTH);
    await page.keyboard.press('Escape');
    await expect(panel).toHaveCount(0);

    // The filters sit behind a button; an agent typed there narrows the rows to it.
    const toggle = page.getByTestId('filters-toggle');
    await expect(toggle).toHaveAttribute('aria-expanded', 'false');
    await toggle.click();
    await expect(page.getByRole('search', { name: 'Filter denials' })).toBeVisible();
    await field(page, 'Agent').fill('trainer');
    await field(page, 'Agent').press('Enter');
    await expect(page).toHaveURL(/[?&]agent=trainer/);
    await expect(rows(page).first()).toContainText('trainer');
    const agents = await column(page, 2);
    expect(agents.length).toBeGreaterThan(0);
    expect(agents.every((a) => a === 'trainer')).toBe(true);
    expect(await wide()).toBeLessThanOrEqual(WIDTH);
  });
});
