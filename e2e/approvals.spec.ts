import { expect, test, type APIRequestContext } from '@playwright/test';
import { E2E } from './fixtures/accounts';
import { pollNow, rendered } from './fixtures/approval-requests';
import { signIn } from './fixtures/session';

const agent = { authorization: `Bearer ${E2E.deployerToken}` };
const admin = { authorization: `Bearer ${E2E.adminToken}` };

/** The deployer asks, over REST, as an external agent would. */
async function deployerChecks(request: APIRequestContext, model: string) {
  const res = await request.post('/api/v1/permissions/check', {
    headers: agent,
    data: { agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: model, env: 'prod' } },
  });
  expect(res.ok()).toBe(true);
  return (await res.json()) as { decision: string; rule_source: string; approval_id: string | null };
}

test.describe('human-in-the-loop approvals', () => {
  test('an operator approves in the browser; the next turn runs the call exactly once', async ({ page, request }) => {
    const model = `m-${Date.now()}`;
    const asked = await deployerChecks(request, model);
    expect(asked).toMatchObject({ decision: 'ASK', rule_source: 'hitl:deploy' });

    await signIn(page, 'olivia');
    await page.goto('/approvals');
    const card = page.locator(`[data-approval-id="${asked.approval_id}"]`);
    await expect(card).toContainText('deployer wants to run deploy_serving');
    await expect(card).toContainText(model);
    await expect(card).toContainText(/expires in \d+h/);
    await page.screenshot({ path: 'test-results/screens/approvals-queue.png', fullPage: true });
    await card.getByRole('button', { name: 'Approve…' }).click();
    // approving asks first: the dialog restates the call, and nothing is decided until it is confirmed
    const dialog = page.getByRole('dialog', { name: 'Approve this request?' });
    await expect(dialog).toContainText(model);
    await expect(card).toHaveCount(1);
    // production: a second, deliberate step (the environment typed) before Approve counts
    await dialog.getByLabel('Type prod to approve').fill('prod');
    await dialog.getByRole('button', { name: /^Approve/ }).click();
    await expect(page.getByRole('status')).toContainText(`Approved: deployer → deploy_serving (model_id ${model}, env prod)`);
    await expect(card).toHaveCount(0);

    expect(await deployerChecks(request, model)).toMatchObject({ decision: 'ALLOW', rule_source: 'hitl:deploy' });
    expect((await deployerChecks(request, model)).decision).toBe('ASK');
  });

  test('a rejection with a reason reaches the audit trail as hitl:deploy', async ({ page, request }) => {
    // Base 36: a run of 13 digits could be a Luhn-valid card number, which the trail masks (so the row would not name it).
    const model = `m-rej-${Date.now().toString(36)}`;
    const asked = await deployerChecks(request, model);
    await signIn(page, 'olivia');
    await page.goto('/approvals');
    const card = page.locator(`[data-approval-id="${asked.approval_id}"]`);
    await card.getByRole('button', { name: 'Reject…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reject this request' });
    await dialog.getByRole('textbox', { name: /Reason/ }).fill('use staging first');
    await dialog.getByRole('button', { name: 'Wrong environment' }).click();
    await expect(dialog.getByRole('textbox', { name: /Reason/ })).toHaveValue('Wrong environment: use staging first');
    await page.screenshot({ path: 'test-results/screens/approvals-reject-dialog.png' });
    await dialog.getByRole('button', { name: 'Reject', exact: true }).click();
    await expect(card).toHaveCount(0);

    const denials = (await (await request.get('/api/v1/permissions/denials?rule_source=hitl&agent=deployer', { headers: admin })).json()) as {
      denials: { rule_source: string; reason: string; arguments_json: string }[];
    };
    const row = denials.denials.find((d) => d.arguments_json.includes(model));
    expect(row).toMatchObject({ rule_source: 'hitl:deploy' });
    expect(row?.reason).toContain('Wrong environment: use staging first');
    expect(await deployerChecks(request, model)).toMatchObject({ decision: 'DENY', rule_source: 'hitl:deploy' });

    await page.goto('/approvals?tab=history&status=rejected');
    await expect(page.getByRole('table', { name: 'Decided approval requests' })).toContainText('Wrong environment: use staging first');
    await page.screenshot({ path: 'test-results/screens/approvals-history.png', fullPage: true });
  });

  test('the keyboard alone approves: j/k move, a asks, the environment typed and Enter confirm', async ({ page, request }) => {
    const first = await deployerChecks(request, `m-kb1-${Date.now()}`);
    await signIn(page, 'olivia');
    await page.goto('/approvals');
    await expect(page.locator(`[data-approval-id="${first.approval_id}"]`)).toBeVisible();
    await expect(page.locator('section[data-ready="true"]')).toBeVisible(); // interactive: the shortcuts listen
    const cards = page.locator('[data-approval-id]');
    const count = await cards.count();
    for (let i = 0; i < count; i++) await page.keyboard.press('j');
    await expect(cards.last()).toBeFocused();
    const lastId = await cards.last().getAttribute('data-approval-id');
    await page.keyboard.press('a');
    const dialog = page.getByRole('dialog', { name: 'Approve this request?' });
    await expect(dialog).toBeVisible();
    // production: the focus is in the box for the environment, never on Approve
    await expect(dialog.getByLabel('Type prod to approve')).toBeFocused();
    await page.keyboard.type('prod');
    await page.keyboard.press('Enter');
    await expect(dialog).toHaveCount(0);
    await expect(page.locator(`[data-approval-id="${lastId}"]`)).toHaveCount(0);
  });

  test('a new request appears without a reload', async ({ page, request }) => {
    await signIn(page, 'olivia');
    await page.goto('/approvals');
    const asked = await deployerChecks(request, `m-live-${Date.now()}`);
    await expect(page.locator(`[data-approval-id="${asked.approval_id}"]`)).toBeVisible({ timeout: 10_000 });
  });

  test('an auditor reads the queue but has no approve or reject buttons, and the API refuses them', async ({ page, request }) => {
    const asked = await deployerChecks(request, `m-aud-${Date.now()}`);
    await signIn(page, 'alex');
    await page.goto('/approvals');
    const card = page.locator(`[data-approval-id="${asked.approval_id}"]`);
    await expect(card).toBeVisible();
    await expect(card.getByRole('button')).toHaveCount(0);
    const res = await page.request.post(`/api/v1/approvals/${asked.approval_id}/approve`, { data: {} });
    expect(res.status()).toBe(403);
  });

  test('several requests are selected and approved together', async ({ page, request }) => {
    const a = await deployerChecks(request, `m-bulk-a-${Date.now()}`);
    const b = await deployerChecks(request, `m-bulk-b-${Date.now()}`);
    await signIn(page, 'olivia');
    await page.goto('/approvals');
    for (const id of [a.approval_id, b.approval_id]) await page.locator(`[data-approval-id="${id}"]`).getByLabel('Select').check();
    await expect(page.getByRole('group', { name: 'Selected requests' })).toContainText('2 selected');
    await page.getByRole('button', { name: 'Approve selected…' }).click();
    // the confirmation lists both requests before anything is decided
    const dialog = page.getByRole('dialog', { name: 'Approve 2 requests?' });
    const listed = dialog.getByRole('list', { name: 'Requests to approve' }).getByRole('listitem');
    await expect(listed).toHaveCount(2);
    for (const id of [a.approval_id, b.approval_id]) await expect(page.locator(`[data-approval-id="${id}"]`)).toHaveCount(1);
    await dialog.getByLabel('Type prod to approve').fill('prod');
    await dialog.getByRole('button', { name: 'Approve 2 requests' }).click();
    for (const id of [a.approval_id, b.approval_id]) await expect(page.locator(`[data-approval-id="${id}"]`)).toHaveCount(0);
  });

  test('the single-key shortcuts can be turned off, and stay off', async ({ page, request }) => {
    const asked = await deployerChecks(request, `m-off-${Date.now()}`);
    await signIn(page, 'olivia');
    await page.goto('/approvals');
    await expect(page.locator('section[data-ready="true"]')).toBeVisible();
    await page.getByLabel('Keyboard shortcuts').uncheck();
    await page.reload();
    await expect(page.getByLabel('Keyboard shortcuts')).not.toBeChecked();
    await page.locator(`[data-approval-id="${asked.approval_id}"]`).focus();
    await page.keyboard.press('a');
    await rendered(page);
    await expect(page.getByRole('dialog')).toHaveCount(0);
    await expect(page.locator(`[data-approval-id="${asked.approval_id}"]`)).toHaveCount(1);
    await page.getByLabel('Keyboard shortcuts').check();
  });

  test('a request decided elsewhere leaves the list with a note of who decided it', async ({ page, request }) => {
    const asked = await deployerChecks(request, `m-else-${Date.now()}`);
    await signIn(page, 'olivia');
    await page.clock.install();
    await page.goto('/approvals');
    const card = page.locator(`[data-approval-id="${asked.approval_id}"]`);
    await expect(card).toBeVisible();
    const res = await request.post(`/api/v1/approvals/${asked.approval_id}/reject`, { headers: admin, data: { reason: 'decided by the admin' } });
    expect(res.ok()).toBe(true);
    await pollNow(page);
    await expect(card).toHaveCount(0);
    await expect(page.getByRole('status')).toContainText('Decided elsewhere: deployer → deploy_serving: rejected by admin');
  });
});
