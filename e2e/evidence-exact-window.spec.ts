import { readFileSync } from 'node:fs';
import { expect, test, type APIRequestContext, type Download, type Page } from '@playwright/test';
import { nextTailPoll } from './fixtures/live-tail';
import { E2E } from './fixtures/accounts';
import { signIn } from './fixtures/session';

/**
 * Exact evidence (issue 24, problem 4): the denial explorer fixes the window it was loaded with (its start and end,
 * and the newest denial id it shows), and "Copy link for this exact window", the CSV and the JSON-lines exports hold
 * exactly the rows the view showed, even after newer denials arrived. The exports name their window and row count
 * (x-swarm-export-* headers; the JSON lines' first record). Before, they took the window at the time of the click.
 */
const admin = { authorization: `Bearer ${E2E.adminToken}` };
const RUN = `ev${Date.now().toString(36)}`;

async function deny(request: APIRequestContext, marker: string): Promise<void> {
  const r = await request.post('/api/v1/permissions/check', { headers: admin, data: { agent: 'shadow_agent', tool: 'web_fetch', arguments: { url: `https://example.test/${marker}` } } });
  expect(r.ok()).toBe(true);
  expect(((await r.json()) as { decision: string }).decision).toBe('DENY');
}

const table = (page: Page) => page.getByRole('table', { name: 'Denials' });
const rows = (page: Page) => table(page).locator('tbody tr');
const shownIds = async (page: Page): Promise<number[]> => (await rows(page).evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-denial-id')))));
const totalOf = async (page: Page): Promise<number> => Number((await page.getByTestId('summary-total').innerText()).replace(/[^0-9]/g, ''));

async function download(page: Page, testId: string): Promise<{ text: string; href: string }> {
  const href = (await page.getByTestId(testId).getAttribute('href'))!;
  const [file]: [Download, void] = await Promise.all([page.waitForEvent('download'), page.getByTestId(testId).click()]);
  return { text: readFileSync((await file.path())!, 'utf8'), href };
}

/** The ids of a CSV export (its first column), after the header line. */
function csvIds(text: string): number[] {
  const lines = text.split('\r\n').filter(Boolean);
  expect(lines[0]).toMatch(/^id,timestamp,timestamp_iso,/);
  return lines.slice(1).map((l) => Number(l.split(',')[0]));
}

interface Meta {
  export: { kind: string; from: number | null; to: number | null; until_id: number; rows: number; from_iso: string | null; to_iso: string | null };
}

test.describe('exact evidence on /denials', () => {
  test.use({ viewport: { width: 1440, height: 960 } });

  test('the copied link, the CSV and the JSON lines hold exactly the rows the view was loaded with', async ({ page, context, request }) => {
    for (let i = 0; i < 3; i++) await deny(request, `${RUN}-a${i}`);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await signIn(page, 'alex');
    await page.clock.install();
    await page.goto(`/denials?window=1h&q=${RUN}`);
    await expect(rows(page)).toHaveCount(3);
    await expect(table(page)).toHaveAttribute('aria-busy', 'false');
    await expect(page.getByTestId('summary-total')).toContainText('3');
    const shown = await shownIds(page);
    expect(shown).toHaveLength(3);

    // Newer denials of the same filter arrive while the auditor reviews; the page announces them, and waits.
    await deny(request, `${RUN}-b0`);
    await deny(request, `${RUN}-b1`);
    await nextTailPoll(page);
    await expect(page.getByTestId('live-tail')).toContainText(/2 new denials/);
    expect(await shownIds(page)).toEqual(shown);

    // The link: the window as loaded (absolute) and the newest id shown.
    await page.getByTestId('copy-exact-link').click();
    const url = await page.evaluate(() => navigator.clipboard.readText());
    await expect(page.getByTestId('copied-link').locator('code')).toHaveText(url);
    await page.screenshot({ path: 'test-results/screens/denials-1440-evidence.png', fullPage: true });
    const link = new URL(url);
    expect(link.searchParams.get('from')).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(link.searchParams.get('to')).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const untilId = Number(link.searchParams.get('until_id'));
    expect(untilId).toBeGreaterThanOrEqual(shown[0]!);
    // The audit report of this view's period: the same start and end as the link, not the moment of the click.
    const report = new URL((await page.getByTestId('report-for-window').getAttribute('href'))!, url);
    expect(report.pathname).toBe('/api/v1/reports/audit.pdf');
    expect(Date.parse(report.searchParams.get('from')!)).toBe(Date.parse(link.searchParams.get('from')!));
    expect(Date.parse(report.searchParams.get('to')!)).toBe(Date.parse(link.searchParams.get('to')!));

    // The CSV: the same rows, the same newest row; its headers name the window and the count.
    const csv = await download(page, 'export-csv');
    expect(csvIds(csv.text)).toEqual(shown);
    const head = await page.request.get(csv.href);
    expect(head.headers()['x-swarm-export-rows']).toBe('3');
    expect(head.headers()['x-swarm-export-until-id']).toBe(String(untilId));
    expect(head.headers()['x-swarm-export-window']).toMatch(/^\d{4}-.+Z\/\d{4}-.+Z until_id=\d+ rows=3$/);

    // The JSON lines: a first record naming the window and the count, then the same rows.
    const ndjson = await download(page, 'export-json');
    const [first, ...lines] = ndjson.text.trim().split('\n');
    const meta = JSON.parse(first!) as Meta;
    expect(meta.export).toMatchObject({ kind: 'permission_denials', until_id: untilId, rows: 3 });
    expect(meta.export.to).not.toBeNull();
    expect(lines.map((l) => (JSON.parse(l) as { id: number }).id)).toEqual(shown);

    // The link opened later shows the same three rows, not the five that now match.
    await page.goto(url);
    await expect(table(page)).toHaveAttribute('aria-busy', 'false');
    await expect(rows(page)).toHaveCount(3);
    expect(await shownIds(page)).toEqual(shown);
    await expect(page.getByTestId('summary-total')).toContainText('3');
  });

  test('the whole trail: the export holds the count the view showed and its newest row, not the rows recorded since', async ({ page, request }) => {
    await deny(request, `${RUN}-c0`);
    await signIn(page, 'alex');
    await page.clock.install();
    await page.goto('/denials');
    await expect(rows(page).first()).toBeVisible();
    await expect(table(page)).toHaveAttribute('aria-busy', 'false');
    await expect(page.getByTestId('summary')).toHaveAttribute('aria-busy', 'false');
    const total = await totalOf(page);
    const newest = (await shownIds(page))[0]!;
    await deny(request, `${RUN}-c1`);
    await deny(request, `${RUN}-c2`);
    await nextTailPoll(page);
    await expect(page.getByTestId('live-tail')).toContainText(/2 new denials/);
    const csv = await download(page, 'export-csv');
    const ids = csvIds(csv.text);
    expect(ids.length).toBe(total);
    expect(ids[0]).toBe(newest);
    const ndjson = await download(page, 'export-json');
    const meta = JSON.parse(ndjson.text.split('\n')[0]!) as Meta;
    expect(meta.export.rows).toBe(total);
    expect(ndjson.text.trim().split('\n').length).toBe(total + 1);
  });
});
