import { expect, test } from '@playwright/test';
import { approvalState, askDeploy, openQueue } from './fixtures/approval-requests';

/**
 * Issue 24, 1: the reject dialog records only a reason the person wrote or chose. The focus starts in the reason
 * text, no preset is focused or pre-selected, and an empty reason is refused with words (nothing is recorded).
 */

test('typed at once, the text lands in the reason; r, Space, Enter rejects nothing', async ({ page, request }) => {
  const id = await askDeploy(request, `m-rj-${Date.now().toString(36)}`);
  await openQueue(page);
  const card = page.locator(`[data-approval-id="${id}"]`);
  await card.focus();

  // r opens the dialog; what is typed straight away is the reason, not a preset
  await page.keyboard.press('r');
  const dialog = page.getByRole('dialog', { name: 'Reject this request' });
  const reason = dialog.getByRole('textbox', { name: /Reason/ });
  await expect(reason).toBeFocused();
  await page.keyboard.type('typed at once');
  await expect(reason).toHaveValue('typed at once');
  // nothing is pre-selected: no radio at all, no preset pressed
  await expect(dialog.getByRole('radio')).toHaveCount(0);
  await expect(dialog.locator('[aria-pressed="true"]')).toHaveCount(0);
  await page.keyboard.press('Escape');
  await expect(dialog).toHaveCount(0);

  // r, Space, Enter: the reason is blank, so it explains what is missing, keeps the focus and records nothing
  await card.focus();
  await page.keyboard.press('r');
  await expect(reason).toBeFocused();
  await page.keyboard.press(' ');
  await page.keyboard.press('Enter');
  await expect(dialog.getByRole('alert')).toContainText('Write the reason');
  await expect(reason).toBeFocused();
  await expect(reason).toHaveAttribute('aria-invalid', 'true');
  await expect(dialog).toBeVisible();
  // the Reject button refuses the same way
  await dialog.getByRole('button', { name: 'Reject', exact: true }).click();
  await expect(dialog.getByRole('alert')).toContainText('Write the reason');
  expect((await approvalState(request, id)).status).toBe('pending');
  await page.keyboard.press('Escape');
  expect((await approvalState(request, id)).status).toBe('pending');
});

test('a preset is a choice: it fills the reason visibly, and what is stored is exactly what was shown', async ({ page, request }) => {
  const model = `m-rp-${Date.now().toString(36)}`;
  const id = await askDeploy(request, model);
  await openQueue(page);
  await page.locator(`[data-approval-id="${id}"]`).getByRole('button', { name: 'Reject…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Reject this request' });
  const reason = dialog.getByRole('textbox', { name: /Reason/ });
  await page.keyboard.type('use staging first');
  // choosing a preset puts its words in front of what was typed, in the text box itself
  await dialog.getByRole('button', { name: 'Wrong environment' }).click();
  await expect(reason).toHaveValue('Wrong environment: use staging first');
  // choosing another replaces the first one, it does not stack
  await dialog.getByRole('button', { name: 'Not during a change freeze' }).click();
  await expect(reason).toHaveValue('Not during a change freeze: use staging first');
  await expect(reason).toBeFocused();
  const shown = await reason.inputValue();
  await dialog.getByRole('button', { name: 'Reject', exact: true }).click();
  await expect(dialog).toHaveCount(0);
  await expect.poll(async () => (await approvalState(request, id)).status).toBe('rejected');
  expect((await approvalState(request, id)).decision_reason).toBe(shown);

  // History says the same words
  await page.goto('/approvals?tab=history&status=rejected');
  await expect(page.getByRole('table', { name: 'Decided approval requests' }).getByRole('row').filter({ hasText: model })).toContainText(shown);
});
