/**
 * At 390 px (a phone), what a person acts on or reads first is in view (issue 41, item 5): every item of the
 * navigation, a denial's reason and rule source, a flag's name beside the administrator's button, the integrity of the
 * audit trail at the top of /audit.
 */
import { expect, test, type Locator, type Page } from '@playwright/test';
import { signIn } from './fixtures/session';

const WIDTH = 390;
const HEIGHT = 844;

/** Within the phone's width: nothing of it off to the right, nothing to scroll sideways for. */
async function expectWithinWidth(locator: Locator, what: string): Promise<void> {
  const box = await locator.boundingBox();
  expect(box, `${what} is rendered`).not.toBeNull();
  expect(box!.x, `${what} starts in view`).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width, `${what} ends in view`).toBeLessThanOrEqual(WIDTH + 0.5);
}

/** Within the first screen (no scrolling). */
async function expectOnFirstScreen(page: Page, locator: Locator, what: string): Promise<void> {
  await expectWithinWidth(locator, what);
  const box = (await locator.boundingBox())!;
  expect(box.y + box.height, `${what} is on the first screen`).toBeLessThanOrEqual(HEIGHT);
  expect(await page.evaluate(() => window.scrollY)).toBe(0);
}

test.describe('at 390 px', () => {
  test.beforeEach(async ({ page }) => {
    await page.setViewportSize({ width: WIDTH, height: HEIGHT });
    await signIn(page, 'admin');
  });

  test('the navigation shows every item it has, none scrolled out of view', async ({ page }) => {
    await page.goto('/denials');
    const links = page.getByRole('navigation', { name: 'Console' }).getByRole('link');
    await expect(links.first()).toBeVisible();
    expect(await links.count()).toBeGreaterThanOrEqual(8);
    for (const link of await links.all()) await expectOnFirstScreen(page, link, `the navigation item "${await link.innerText()}"`);
  });

  test('a denial shows its reason and rule source without scrolling sideways', async ({ page }) => {
    await page.goto('/denials');
    const row = page.locator('[data-denial-id]').first();
    await expect(row).toBeVisible();
    for (const column of ['reason', 'rule_source', 'agent_name', 'tool_name']) {
      await expectWithinWidth(row.locator(`td[class*="col_${column}"]`), `the denial's ${column}`);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(WIDTH);
  });

  test('a flag\'s name stays beside the administrator\'s button', async ({ page }) => {
    await page.goto('/transparency');
    const row = page.locator('[data-flag]').filter({ has: page.getByRole('button', { name: /^Turn (on|off) [a-z_]+$/ }) }).first();
    await row.scrollIntoViewIfNeeded();
    const name = row.locator('td').first();
    const button = row.getByRole('button', { name: /^Turn (on|off) [a-z_]+$/ });
    await expectWithinWidth(name, 'the flag name');
    await expectWithinWidth(button, 'its button');
    // the button's own cell says which flag it changes
    const cell = row.locator('td').filter({ has: page.getByRole('button', { name: /^Turn (on|off) [a-z_]+$/ }) });
    expect(await cell.getAttribute('data-label')).toBe(`Change ${await row.getAttribute('data-flag')}`);
  });

  test('the integrity of the audit trail is at the top of /audit, on the first screen', async ({ page }) => {
    await page.goto('/audit');
    // Its heading line: the badge lists each chain below it, as long as the trail has chains.
    const heading = page.getByText(/^Integrity:/).first();
    await expect(heading).toBeVisible();
    await expectWithinWidth(heading, 'the integrity badge');
    const box = (await heading.boundingBox())!;
    expect(box.y + box.height, 'the integrity badge starts on the first screen').toBeLessThanOrEqual(HEIGHT);
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    // and before the events
    const firstEvent = page.getByRole('region', { name: /events/ }).first();
    if (await firstEvent.count()) expect(box.y).toBeLessThan((await firstEvent.boundingBox())!.y);
  });

  for (const path of ['/denials', '/audit', '/reports', '/approvals', '/transparency', '/policy', '/notifications', '/settings/tokens', '/docs', '/api-docs']) {
    test(`${path}: its title on the first screen, nothing to scroll sideways for`, async ({ page }) => {
      await page.goto(path);
      const title = page.getByRole('heading', { level: 1 }).first();
      await expect(title).toBeVisible();
      await expectOnFirstScreen(page, title, `the title of ${path}`);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), `${path} is no wider than the phone`).toBeLessThanOrEqual(WIDTH);
    });
  }
});
