import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { signIn, signInWithForm } from './fixtures/session';

/**
 * The reports page against the built server: an auditor picks a period and downloads the audit report as a PDF (read
 * back with pdftotext: the running header names the system, the period and the report id) and as OSCAL JSON; a
 * viewer is refused; the page at 1440 and 390 pixels wide.
 */
const SHOTS = 'test-results/screens';
const ymd = (ms: number) => new Date(ms).toISOString().slice(0, 10);

test.describe('the reports page', () => {
  test.use({ viewport: { width: 1440, height: 960 } });

  test('an auditor downloads the audit report of the last 30 days as a PDF with the expected header', async ({ page }) => {
    await signInWithForm(page, 'alex');
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: /Reports/ }).click();
    await expect(page).toHaveURL(/\/reports$/);
    await expect(page.getByRole('heading', { level: 1, name: 'Reports' })).toBeVisible();
    await expect(page.getByRole('heading', { name: 'Active compliance profiles' })).toBeVisible();
    await expect(page.getByRole('complementary').getByText('Banks and insurers (BFSI)')).toBeVisible();

    // The default period: the last 30 days, today included.
    const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    await expect(page.getByLabel('First day')).toHaveValue(ymd(today - 29 * 86_400_000));
    await expect(page.getByLabel('Last day')).toHaveValue(ymd(today));
    await expect(page.getByRole('button', { name: 'Last 30 days' })).toHaveAttribute('aria-pressed', 'true');
    await page.screenshot({ path: `${SHOTS}/reports-1440.png`, fullPage: true });

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download PDF' }).click()]);
    expect(download.suggestedFilename()).toBe(`swarm-audit-report_${ymd(today - 29 * 86_400_000)}_${ymd(today + 86_400_000)}.pdf`);
    const file = await download.path();
    const bytes = readFileSync(file);
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const text = execFileSync('pdftotext', ['-l', '2', file, '-'], { encoding: 'utf8' });
    expect(text).toContain('Swarm Permissions');
    expect(text).toContain(`Period ${ymd(today - 29 * 86_400_000)} to ${ymd(today + 86_400_000)}`);
    expect(text).toMatch(/Report rpt_[0-9a-f-]{36}/);
    expect(text).toContain('by alex');
    expect(text).toMatch(/page 1 of \d+/);
    expect(text).toContain('Audit report');

    // The generation is listed on the page once it is reloaded (it is a security event).
    await page.reload();
    await expect(page.getByRole('table', { name: 'Reports generated lately, newest first' }).locator('tbody tr').first()).toContainText('alex');
  });

  test('quick choices set the period; the OSCAL download is assessment results; a backwards period cannot be downloaded', async ({ page }) => {
    await signIn(page, 'alex');
    // The page's clock is the test's, so that "last month" is known whatever day the test runs (and across midnight).
    const now = new Date('2026-03-16T10:00:00Z');
    await page.clock.setFixedTime(now);
    await page.goto('/reports');
    await page.getByRole('button', { name: 'Last month' }).click();
    const first = ymd(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
    const last = ymd(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) - 86_400_000);
    await expect(page.getByLabel('First day')).toHaveValue(first);
    await expect(page.getByLabel('Last day')).toHaveValue(last);
    await page.getByLabel('Control mapping').selectOption('bfsi');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download OSCAL JSON' }).click()]);
    const doc = JSON.parse(readFileSync(await download.path(), 'utf8')) as { 'assessment-results': { metadata: { 'oscal-version': string }; results: { findings: unknown[] }[] } };
    expect(doc['assessment-results'].metadata['oscal-version']).toMatch(/^1\.1\./);
    expect(doc['assessment-results'].results[0]!.findings.length).toBeGreaterThan(0);

    await page.getByLabel('First day').fill('2026-03-10');
    await page.getByLabel('Last day').fill('2026-03-01');
    await expect(page.getByTestId('report-period')).toHaveAttribute('role', 'alert');
    await expect(page.getByTestId('report-period')).toContainText('The last day is before the first day.');
    await expect(page.getByRole('button', { name: 'Download PDF' })).toBeDisabled();
    await expect(page.getByRole('link', { name: 'Download PDF' })).toHaveCount(0);
  });

  test('a viewer is refused the page', async ({ page }) => {
    await signIn(page, 'victor');
    await page.goto('/reports');
    await expect(page.getByRole('heading', { name: 'You do not have access to this page' })).toBeVisible();
    await expect(page.getByText('rbac:auditor')).toBeVisible();
  });
});

test.describe('the reports page on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test('fits 390 px: no sideways scrolling, the downloads reachable', async ({ page }) => {
    await signIn(page, 'alex');
    await page.goto('/reports');
    await expect(page.getByRole('link', { name: 'Download PDF' })).toBeVisible();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${SHOTS}/reports-390.png`, fullPage: true });
  });
});
