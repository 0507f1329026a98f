/**
 * Operations against the real server (the decision listener in front of the Next.js production build): /metrics
 * merged from both processes, and the /api-docs reference page at desktop and phone widths, by keyboard. Readiness,
 * health and the OpenAPI document without a token are tests/ops.test.ts (the route handlers in process).
 */
import { expect, test, type APIRequestContext } from '@playwright/test';
import { E2E } from './fixtures/accounts';

const admin = { authorization: `Bearer ${E2E.adminToken}` };
const screens = `${process.env.E2E_OUTPUT_DIR ?? 'test-results'}/screens`;

function samples(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  return text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?\s+(\S+)$/.exec(l);
      if (!m) throw new Error(`not a sample line: ${l}`);
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1]!, x[2]!]));
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
}

async function scrape(request: APIRequestContext) {
  const r = await request.get('/metrics', { headers: admin });
  expect(r.status()).toBe(200);
  return samples(await r.text());
}

const sum = (s: ReturnType<typeof samples>, name: string, where: Record<string, string> = {}) =>
  s.filter((x) => x.name === name && Object.entries(where).every(([k, v]) => x.labels[k] === v)).reduce((a, x) => a + x.value, 0);

test.describe('operations', () => {
  test('/metrics merges both processes and moves with the calls made', async ({ request }) => {
    expect((await request.get('/metrics')).status()).toBe(401);
    expect((await request.get('/internal/metrics')).status()).toBe(404);
    const before = await scrape(request);
    expect(sum(before, 'swarm_next_metrics_up')).toBe(1);
    // Decided by the listener: three checks with the deployer's token.
    for (let i = 0; i < 3; i++) {
      const r = await request.post('/api/v1/permissions/check', {
        headers: { authorization: `Bearer ${E2E.deployerToken}` },
        data: { agent: 'deployer', tool: 'retrain_everything', arguments: { i } },
      });
      expect(r.status()).toBe(200);
      expect(((await r.json()) as { decision: string }).decision).toBe('DENY');
    }
    // Decided by the Next.js process: three reads of the flags.
    for (let i = 0; i < 3; i++) expect((await request.get('/api/v1/flags', { headers: admin })).status()).toBe(200);
    const after = await scrape(request);
    const tool = { kind: 'tool', decision: 'DENY', source_family: 'agent_allowlist' };
    expect(sum(after, 'swarm_decisions_total', tool) - sum(before, 'swarm_decisions_total', tool)).toBe(3);
    // Three flag reads in Next.js, and this scrape's own admin check in the listener.
    expect(sum(after, 'swarm_decisions_total', { kind: 'http' }) - sum(before, 'swarm_decisions_total', { kind: 'http' })).toBeGreaterThanOrEqual(4);
    expect(sum(after, 'swarm_wal_size_bytes')).toBeGreaterThanOrEqual(0);
    expect(after.some((x) => x.name === 'swarm_audit_chain_head_age_seconds')).toBe(true);
  });

  for (const width of [1440, 390]) {
    test(`/api-docs reads at ${width} px and works with the keyboard`, async ({ page, request }) => {
      await page.setViewportSize({ width, height: width > 800 ? 900 : 844 });
      const doc = (await (await request.get('/api/v1/openapi.json')).json()) as { paths: Record<string, Record<string, { operationId: string }>> };
      await page.goto('/api-docs');
      await expect(page.getByRole('heading', { level: 1, name: 'API reference' })).toBeVisible();
      const ops = Object.values(doc.paths).flatMap((p) => Object.values(p));
      await expect(page.locator('article')).toHaveCount(ops.length);
      const check = page.locator('#postApiV1PermissionsCheck');
      await expect(check).toContainText('POST');
      await expect(check).toContainText('viewer and above');
      await page.screenshot({ path: `${screens}/api-docs-${width}.png`, fullPage: false });
      // The skip link, then an operation by its link in the list, then its schema opened with Enter.
      await page.keyboard.press('Tab');
      await expect(page.getByRole('link', { name: 'Skip to content' })).toBeFocused();
      const link = page.getByRole('navigation', { name: 'Operations' }).getByRole('link', { name: /PUT \/api\/v1\/flags\/\{name\}/ });
      await link.focus();
      await page.keyboard.press('Enter');
      await expect(page).toHaveURL(/#putApiV1FlagsName$/);
      const put = page.locator('#putApiV1FlagsName');
      await expect(put).toContainText('admin');
      await expect(put.getByRole('cell', { name: 'name', exact: true })).toBeVisible();
      const summary = put.locator('summary');
      await summary.focus();
      await page.keyboard.press('Enter');
      await expect(put.locator('pre')).toContainText('"reason"');
      await page.screenshot({ path: `${screens}/api-docs-${width}-flag.png`, fullPage: false });
    });
  }
});
