import { expect, test } from '@playwright/test';
import { signIn } from './fixtures/session';
import { adminHeaders, approvalState, askDeploy, askMail, openQueue, pollNow, rejectAsAdmin } from './fixtures/approval-requests';

/**
 * The queue under load (issue 24, the smaller points): a dialog whose request is decided elsewhere closes with a
 * note, production and high-risk approvals take a typed second step, the pending requests filter by agent, tool,
 * gate and risk (in the URL) and fit a compact view, the tab title counts them, History wraps its Reason, and the
 * page's own poll says it is a background request.
 */

const SHOTS = 'test-results/screens';

test('an open dialog closes with a note when its request is decided elsewhere, instead of a 409 on confirm', async ({ page, request }) => {
  const approveId = await askMail(request, `closed-a ${Date.now()}`);
  const rejectId = await askMail(request, `closed-r ${Date.now()}`);
  await page.clock.install();
  await openQueue(page);

  await page.locator(`[data-approval-id="${approveId}"]`).getByRole('button', { name: 'Approve…' }).click();
  const approve = page.getByRole('dialog', { name: 'Approve this request?' });
  await expect(approve).toBeVisible();
  await rejectAsAdmin(request, approveId, 'handled by the admin');
  await pollNow(page);
  await expect(approve).toHaveCount(0);
  await expect(page.getByRole('status')).toContainText('The dialog was closed, nothing was sent: this request was decided elsewhere.');
  await expect(page.getByRole('status')).toContainText('rejected by admin (handled by the admin)');

  await page.locator(`[data-approval-id="${rejectId}"]`).getByRole('button', { name: 'Reject…' }).click();
  const reject = page.getByRole('dialog', { name: 'Reject this request' });
  await page.keyboard.type('half-written reason');
  const res = await request.post(`/api/v1/approvals/${rejectId}/approve`, { headers: adminHeaders, data: {} });
  expect(res.ok()).toBe(true);
  await expect(reject).toHaveCount(0);
  await expect(page.getByRole('status')).toContainText('approved');
  expect((await approvalState(request, rejectId)).status).toBe('approved');
});

test('production and high-risk approvals need the word typed; a medium-risk one a box ticked on purpose; none starts on Approve', async ({ page, request }) => {
  const stamp = Date.now().toString(36);
  const prod = await askDeploy(request, `m-step-p-${stamp}`, 'prod');
  const high = await askDeploy(request, `m-step-h-${stamp}`, 'staging');
  const medium = await askMail(request, `step ${stamp}`);
  await page.setViewportSize({ width: 1440, height: 900 });
  await openQueue(page);

  // production: the focus starts in the box, Enter alone refuses in words, a wrong word too
  await page.locator(`[data-approval-id="${prod}"]`).focus();
  await page.keyboard.press('a');
  const dialog = page.getByRole('dialog', { name: 'Approve this request?' });
  const word = dialog.getByLabel('Type prod to approve');
  await expect(word).toBeFocused();
  await expect(dialog).toContainText('runs in production');
  await page.screenshot({ path: `${SHOTS}/approve-production-1440.png` });
  await page.keyboard.press('Enter');
  await expect(dialog.getByRole('alert')).toContainText('Nothing typed yet. Type prod exactly to approve');
  await expect(word).toBeFocused();
  await page.keyboard.type('pro');
  await page.keyboard.press('Enter');
  await expect(dialog.getByRole('alert')).toContainText('“pro” is not “prod”');
  expect((await approvalState(request, prod)).status).toBe('pending');
  await page.keyboard.type('d');
  await page.keyboard.press('Enter');
  await expect(dialog).toHaveCount(0);
  await expect.poll(async () => (await approvalState(request, prod)).status).toBe('approved');

  // high risk, not production: the tool's name
  await page.locator(`[data-approval-id="${high}"]`).getByRole('button', { name: 'Approve…' }).click();
  await expect(dialog.getByLabel('Type deploy_serving to approve')).toBeFocused();
  await expect(dialog).toContainText('high-risk call');
  await dialog.getByRole('button', { name: /^Approve/ }).click();
  await expect(dialog.getByRole('alert')).toBeVisible();
  expect((await approvalState(request, high)).status).toBe('pending');
  await dialog.getByLabel('Type deploy_serving to approve').fill('deploy_serving');
  await dialog.getByRole('button', { name: /^Approve/ }).click();
  await expect.poll(async () => (await approvalState(request, high)).status).toBe('approved');

  // medium risk: the focus starts on a box to tick on purpose, never on Approve; Enter there, or Approve unticked,
  // decides nothing and says why; the recipient is shown whole in the dialog
  await page.locator(`[data-approval-id="${medium}"]`).getByRole('button', { name: 'Approve…' }).click();
  const tick = dialog.getByRole('checkbox', { name: /I have read this call and its arguments, and approve it/ });
  await expect(tick).toBeFocused();
  await expect(dialog).toContainText('send_email is a medium-risk call');
  await page.screenshot({ path: `${SHOTS}/approve-medium-1440.png` });
  await page.keyboard.press('Enter');
  await dialog.getByRole('button', { name: /^Approve/ }).click();
  await expect(dialog.getByRole('alert')).toHaveText('Tick the box to approve, or Cancel.');
  expect((await approvalState(request, medium)).status).toBe('pending');
  await tick.check();
  await dialog.getByRole('button', { name: /^Approve/ }).click();
  await expect.poll(async () => (await approvalState(request, medium)).status).toBe('approved');
});

test('pending requests filter by agent, tool, gate and risk (kept in the URL), fit a compact view, and the title counts them', async ({ page, request }) => {
  const stamp = Date.now().toString(36);
  const mail = await askMail(request, `filter ${stamp}`);
  const deploy = await askDeploy(request, `m-filter-${stamp}`);
  await page.setViewportSize({ width: 1440, height: 900 });
  await openQueue(page);
  const total = await page.locator('[data-approval-id]').count();
  await expect(page).toHaveTitle(`(${total}) Approvals · Swarm Permissions`);

  const filters = page.getByRole('search', { name: 'Filter pending requests' });
  await filters.getByLabel('Risk').selectOption('medium');
  await expect(page).toHaveURL(/[?&]risk=medium/);
  await expect(page.locator(`[data-approval-id="${mail}"]`)).toBeVisible();
  await expect(page.locator(`[data-approval-id="${deploy}"]`)).toHaveCount(0);
  await expect(page.locator('[data-approval-id]')).not.toHaveCount(total);
  await expect(page.getByRole('heading', { name: /of \d+ waiting shown/ })).toBeVisible();
  // the title counts every waiting request, not only the shown ones
  await expect(page).toHaveTitle(`(${total}) Approvals · Swarm Permissions`);

  // native selects (keyboard-usable as they are); the filters combine
  await filters.getByLabel('Risk').selectOption('');
  await filters.getByLabel('Agent').focus();
  await page.keyboard.press('Tab');
  await expect(filters.getByLabel('Tool')).toBeFocused();
  await filters.getByLabel('Gate').selectOption('deploy');
  await filters.getByLabel('Tool').selectOption('deploy_serving');
  await filters.getByLabel('Agent').selectOption('deployer');
  await expect(page).toHaveURL(/gate=deploy/);
  await expect(page.locator(`[data-approval-id="${deploy}"]`)).toBeVisible();
  await expect(page.locator(`[data-approval-id="${mail}"]`)).toHaveCount(0);

  // a reload keeps the filter
  await page.reload();
  await expect(page.locator('section[data-ready="true"]')).toBeVisible();
  await expect(filters.getByLabel('Gate')).toHaveValue('deploy');
  await expect(page.locator(`[data-approval-id="${mail}"]`)).toHaveCount(0);
  await filters.getByRole('button', { name: 'Clear filters' }).click();
  await expect(page.locator('[data-approval-id]')).toHaveCount(total);
  await expect(page).not.toHaveURL(/gate=/);

  // the compact view: many more requests a screen
  const full = (await page.locator(`[data-approval-id="${deploy}"]`).boundingBox())!.height;
  await page.screenshot({ path: `${SHOTS}/pending-1440.png` });
  await filters.getByRole('button', { name: 'Compact view' }).click();
  await expect(filters.getByRole('button', { name: 'Compact view' })).toHaveAttribute('aria-pressed', 'true');
  await expect(page).toHaveURL(/view=compact/);
  const compact = (await page.locator(`[data-approval-id="${deploy}"]`).boundingBox())!.height;
  expect(compact * 2.5).toBeLessThan(full);
  await page.screenshot({ path: `${SHOTS}/pending-compact-1440.png` });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${SHOTS}/pending-compact-390.png` });
  await filters.getByRole('button', { name: 'Compact view' }).click();
  await page.screenshot({ path: `${SHOTS}/pending-390.png` });
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  await page.locator(`[data-approval-id="${deploy}"]`).getByRole('button', { name: 'Reject…' }).click();
  await page.screenshot({ path: `${SHOTS}/reject-dialog-390.png` });
  await page.keyboard.press('Escape');
  await page.locator(`[data-approval-id="${deploy}"]`).getByRole('button', { name: 'Approve…' }).click();
  await page.screenshot({ path: `${SHOTS}/approve-high-risk-390.png` });
  await page.keyboard.press('Escape');
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.locator(`[data-approval-id="${deploy}"]`).getByRole('button', { name: 'Reject…' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Wrong environment' }).click();
  await page.screenshot({ path: `${SHOTS}/reject-dialog-1440.png` });
  await page.keyboard.press('Escape');
});

test('History wraps a long reason at 1440 px instead of cutting it', async ({ page, request }) => {
  // an unbroken link in the reason and a long unbroken argument: what pushed Reason out of view before
  const stamp = `wrap-${Date.now().toString(36)}`;
  const subject = `${stamp}-${'x'.repeat(70)}`;
  const id = await askMail(request, subject);
  const reason = `Wrong environment: see https://tickets.example/CHG-${'0123456789'.repeat(9)} and ask again on Monday after the change board`;
  await rejectAsAdmin(request, id, reason);
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page, 'olivia');
  await page.goto('/approvals?tab=history&status=rejected');
  const row = page.getByRole('table', { name: 'Decided approval requests' }).getByRole('row').filter({ hasText: stamp });
  const cell = row.getByRole('cell').last();
  await expect(cell).toHaveText(reason);
  // nothing scrolls sideways: the whole reason is on the screen, wrapped
  expect(await page.locator('.table-wrap').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
  const box = (await cell.boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(1440);
  await page.screenshot({ path: `${SHOTS}/history-1440.png` });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${SHOTS}/history-390.png` });
});

test('the queue’s own poll is marked as a background request', async ({ page }) => {
  await openQueue(page);
  const poll = await page.waitForRequest((r) => r.url().includes('/api/v1/approvals?status=pending'));
  expect(await poll.headerValue('x-swarm-background')).toBe('1');
});
