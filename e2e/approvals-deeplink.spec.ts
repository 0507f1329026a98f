import { expect, test } from '@playwright/test';
import { askDeploy, askMail, openQueue, rejectAsAdmin } from './fixtures/approval-requests';

/**
 * Issue 24, 3: the link notifications send, /approvals?request=<id>, brings that request into view (scrolled to,
 * focused, highlighted), or says who decided it, when and why, or that there is no such request.
 */

test('a pending request is scrolled to, focused and highlighted', async ({ page, request }) => {
  const stamp = Date.now().toString(36);
  // enough requests before it that it starts below the fold on a phone
  for (let i = 0; i < 4; i++) await askMail(request, `before ${i} ${stamp}`);
  const id = await askDeploy(request, `m-dl-${stamp}`);
  await askMail(request, `after ${stamp}`);
  await page.setViewportSize({ width: 390, height: 844 });
  await openQueue(page, `/approvals?request=${id}`);
  const card = page.locator(`[data-approval-id="${id}"]`);
  await expect(card).toBeFocused();
  await expect(card).toHaveAttribute('data-highlighted', 'true');
  await expect(card).toHaveAttribute('aria-current', 'true');
  await expect(card).toBeInViewport();
  await expect(page.locator('[data-highlighted="true"]')).toHaveCount(1);
  await page.screenshot({ path: 'test-results/screens/deeplink-390.png' });
});

test('a request already decided says who decided it, when and why; an unknown one says it was not found', async ({ page, request }) => {
  const id = await askDeploy(request, `m-dld-${Date.now().toString(36)}`);
  await rejectAsAdmin(request, id, 'frozen until Monday');
  await openQueue(page, `/approvals?request=${id}`);
  const told = page.getByTestId('deep-link-result');
  await expect(told).toContainText('already decided');
  await expect(told).toContainText('Rejected by admin');
  await expect(told).toContainText('frozen until Monday');
  await expect(told.locator('time')).toHaveCount(1);
  await expect(page.locator(`[data-approval-id="${id}"]`)).toHaveCount(0);

  await page.goto('/approvals?request=apr_doesnotexist0001');
  await expect(page.getByTestId('deep-link-result')).toContainText('not found');
  await page.goto('/approvals?request=not-an-id');
  await expect(page.getByTestId('deep-link-result')).toContainText('not found');
});
