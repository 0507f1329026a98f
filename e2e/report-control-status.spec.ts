import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { signIn } from './fixtures/session';

/**
 * Control status that is true (issue 24, problem 5): the audit report of the month before the end-to-end server started
 * (its database is new, so the whole month predates the trail) must not say that any control is satisfied or
 * demonstrated, PCI DSS 10.4.1 ("logs reviewed at least daily") above all, and must say on its cover that the period
 * predates the trail. Before the fix it said "In force" for all 12 controls and OSCAL said "satisfied".
 */
const SHOTS = 'test-results/screens';
const ymd = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/**
 * The test owns its clock: the page believes it is mid-March 2026, so its "Last month" is February 2026, a month that
 * predates the trail of every run (the server's database is made at the start of the run, and its seeded rows go back
 * three weeks from the real day). With the real clock, "last month" held those seeded rows in the first weeks of a
 * month (from 2026-12-01 the test failed).
 */
const PAGE_NOW = new Date('2026-03-16T10:00:00Z');

test.describe('the report of a period before the trail', () => {
  test.use({ viewport: { width: 1440, height: 960 } });

  test('demonstrates no control, 10.4.1 least of all, and its cover says that the period predates the trail', async ({ page, request }) => {
    await signIn(page, 'alex');
    await page.clock.setFixedTime(PAGE_NOW);
    await page.goto('/reports');
    await page.getByRole('button', { name: 'Last month' }).click();
    const now = PAGE_NOW;
    const first = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1);
    const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    await expect(page.getByLabel('First day')).toHaveValue(ymd(first));
    await page.screenshot({ path: `${SHOTS}/reports-1440.png`, fullPage: true });

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download PDF' }).click()]);
    const file = await download.path();
    const pages = execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' }).split('\f');
    const cover = pages[0]!.replace(/\s+/g, ' ');
    expect(cover).toContain('What this report cannot show for the period');
    expect(cover).toMatch(/This period predates the audit trail(, whose first row was recorded at \d{4}-\d{2}-\d{2}T[\d:]+Z)?/);
    const text = pages.join(' ').replace(/\s+/g, ' ');
    const at = text.indexOf('10.4.1 PCI DSS v4.0');
    expect(at).toBeGreaterThan(0);
    const row = text.slice(at, text.indexOf('10.5.1 PCI DSS v4.0', at));
    expect(row).toContain('Audit logs are reviewed at least once daily.');
    expect(row).toContain('NOT DEMONSTRATED');
    expect(row.replace('NOT DEMONSTRATED', '')).not.toMatch(/satisfied|demonstrated|in force\b/i);
    // No control of the period is demonstrated: the profile's summary line says so.
    expect(text).toMatch(/0 demonstrated, \d+ not demonstrated, \d+ not applicable, of \d+ controls\./);
    expect(text).not.toMatch(/\bsatisfied\b/i);

    // The OSCAL findings of the same period: nothing satisfied, 10.4.1 not-satisfied with what is missing.
    const oscal = await request.get(`/api/v1/reports/audit.oscal.json?from=${ymd(first)}&to=${ymd(next)}&profile=bfsi`, { headers: { cookie: (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ') } });
    expect(oscal.status()).toBe(200);
    const doc = (await oscal.json()) as { 'assessment-results': { results: { remarks?: string; findings: { props: { name: string; value: string }[]; target: { status: { state: string; remarks?: string } } }[] }[] } };
    const result = doc['assessment-results'].results[0]!;
    expect(result.remarks).toContain('predates the audit trail');
    expect(result.findings.filter((f) => f.target.status.state === 'satisfied')).toEqual([]);
    const f1041 = result.findings.find((f) => f.props.some((p) => p.name === 'control-id' && p.value === '10.4.1'))!;
    expect(f1041.target.status).toMatchObject({ state: 'not-satisfied', remarks: expect.stringContaining('predates the audit trail') });
  });
});

test.describe('the reports page on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test('says what the report contains, control status included, without sideways scrolling', async ({ page }) => {
    await signIn(page, 'alex');
    await page.clock.setFixedTime(PAGE_NOW);
    await page.goto('/reports');
    await expect(page.getByText(/demonstrated \(its evidence is in the trail for the period\), not demonstrated/)).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${SHOTS}/reports-390.png`, fullPage: true });
    // The last month's PDF from the phone: the same statement on its cover.
    await page.getByRole('button', { name: 'Last month' }).click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download PDF' }).click()]);
    const cover = execFileSync('pdftotext', ['-l', '1', await download.path(), '-'], { encoding: 'utf8' }).replace(/\s+/g, ' ');
    expect(cover).toContain('This period predates the audit trail');
    expect(readFileSync(await download.path()).subarray(0, 5).toString('latin1')).toBe('%PDF-');
  });
});
