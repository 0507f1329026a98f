import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { E2E, user } from './fixtures/accounts';
import { isolatedServer, type IsolatedServer } from './fixtures/isolated-server';
import { nextPoll, pollNow } from './fixtures/approval-requests';
import { signIn, signInWithForm } from './fixtures/session';

/**
 * The approval queue under time pressure: no keystroke decides on its own, the confirmation restates the call,
 * bulk actions show what they will decide, the counters agree, and duplicate requests can be told apart.
 */

const agent = { authorization: `Bearer ${E2E.deployerToken}` };
const admin = { authorization: `Bearer ${E2E.adminToken}` };

/** The deployer asks, over REST, as an external agent would. */
async function deployerChecks(request: APIRequestContext, model: string, env = 'prod') {
  const res = await request.post('/api/v1/permissions/check', {
    headers: agent,
    data: { agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: model, env } },
  });
  expect(res.ok()).toBe(true);
  const body = (await res.json()) as { decision: string; rule_source: string; approval_id: string | null };
  expect(body.decision).toBe('ASK');
  return body as { decision: string; rule_source: string; approval_id: string };
}

async function statusOf(request: APIRequestContext, id: string): Promise<string> {
  const res = await request.get(`/api/v1/approvals/${id}`, { headers: admin });
  expect(res.ok()).toBe(true);
  return ((await res.json()) as { status: string }).status;
}

async function pendingIds(request: APIRequestContext): Promise<string[]> {
  const res = await request.get('/api/v1/approvals?status=pending', { headers: admin });
  expect(res.ok()).toBe(true);
  return ((await res.json()) as { approvals: { id: string }[] }).approvals.map((a) => a.id);
}

/** The queue page, signed in as olivia, once it is interactive (the shortcuts listen). */
async function openQueue(page: Page, { signedIn = false } = {}) {
  if (!signedIn) await signIn(page, 'olivia');
  await page.goto('/approvals');
  await expect(page.locator('section[data-ready="true"]')).toBeVisible();
}

const SCREENS = 'test-results/screens';


test.describe('a safe approval queue', () => {
  test('nothing is current on load, and a stray "a" approves nothing', async ({ page, request }) => {
    const asked = await deployerChecks(request, `m-stray-${Date.now()}`);
    await openQueue(page);
    const cards = page.locator('[data-approval-id]');
    await expect(page.locator(`[data-approval-id="${asked.approval_id}"]`)).toBeVisible();
    await expect(page.locator('[data-approval-id][aria-current="true"]')).toHaveCount(0);
    const before = await pendingIds(request);

    // the page just loaded: a stray key opens nothing and decides nothing
    await page.keyboard.press('a');
    await expect(page.getByRole('status')).toContainText('Move to a request first (j/k).');
    await expect(page.getByRole('dialog')).toHaveCount(0);
    // said again, the note replaces itself: one note, not a stack of the same words
    await page.keyboard.press('a');
    await page.keyboard.press('r');
    await expect(page.getByRole('status').getByText('Move to a request first (j/k).')).toHaveCount(1);
    expect(await statusOf(request, asked.approval_id)).toBe('pending');

    // j moves to the first card; a only asks; Escape closes without deciding
    await page.keyboard.press('j');
    await expect(cards.first()).toBeFocused();
    await expect(cards.first()).toHaveAttribute('aria-current', 'true');
    const firstId = (await cards.first().getAttribute('data-approval-id'))!;
    await page.keyboard.press('a');
    const dialog = page.getByRole('dialog', { name: 'Approve this request?' });
    await expect(dialog).toBeVisible();
    await page.keyboard.press('Escape');
    await expect(dialog).toHaveCount(0);
    await nextPoll(page);
    expect(await statusOf(request, firstId)).toBe('pending');
    expect(await statusOf(request, asked.approval_id)).toBe('pending');
    const after = await pendingIds(request);
    for (const id of before) expect(after).toContain(id);
    await expect(page.locator(`[data-approval-id="${firstId}"]`)).toBeVisible();

    // Cancel closes it as well, and focus is back on the card
    await page.keyboard.press('a');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(dialog).toHaveCount(0);
    await expect(cards.first()).toBeFocused();
    expect(await statusOf(request, firstId)).toBe('pending');
  });

  test('the confirmation restates agent, tool, arguments (production marked) and risk; the environment typed, Enter approves', async ({ page, request }) => {
    const model = `m-confirm-${Date.now()}`;
    const asked = await deployerChecks(request, model);
    await page.setViewportSize({ width: 1440, height: 900 });
    await openQueue(page);
    const card = page.locator(`[data-approval-id="${asked.approval_id}"]`);
    await expect(card.locator('[data-risk]')).toHaveText(/(Low|Medium|High) risk/i);
    await expect(card).toContainText('Why it waits:');
    await expect(card.locator('[data-production]')).toContainText('prod');
    await expect(card.locator('[data-production]')).toContainText('production');

    await card.getByRole('button', { name: 'Approve…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Approve this request?' });
    await expect(dialog).toContainText('deployer wants to run deploy_serving');
    await expect(dialog).toContainText(model);
    await expect(dialog.locator('[data-production]')).toContainText('prod');
    await expect(dialog.locator('[data-production]')).toContainText('production');
    await expect(dialog.locator('[data-risk]')).toHaveText(/(Low|Medium|High) risk/i);
    await expect(dialog).toContainText('deploy');
    const confirm = dialog.getByRole('button', { name: /^Approve/ });
    const word = dialog.getByLabel('Type prod to approve');
    await expect(word).toBeFocused();
    await expect(confirm).not.toBeFocused();
    await page.screenshot({ path: `${SCREENS}/approvals-confirm-1440.png` });
    expect(await statusOf(request, asked.approval_id)).toBe('pending');

    await page.keyboard.type('prod');
    await page.keyboard.press('Enter');
    await expect(dialog).toHaveCount(0);
    await expect(page.getByRole('status')).toContainText(`Approved: deployer → deploy_serving (model_id ${model}, env prod)`);
    await expect(card).toHaveCount(0);
    expect(await statusOf(request, asked.approval_id)).toBe('approved');
  });

  test('bulk approve lists every request it will decide before deciding', async ({ page, request }) => {
    const stamp = Date.now();
    const a = await deployerChecks(request, `m-list-a-${stamp}`);
    const b = await deployerChecks(request, `m-list-b-${stamp}`, 'staging');
    await openQueue(page);
    for (const id of [a.approval_id, b.approval_id]) await page.locator(`[data-approval-id="${id}"]`).getByLabel('Select').check();
    await page.getByRole('button', { name: 'Approve selected…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Approve 2 requests?' });
    const rows = dialog.getByRole('list', { name: 'Requests to approve' }).getByRole('listitem');
    await expect(rows).toHaveCount(2);
    await expect(rows.filter({ hasText: `m-list-a-${stamp}` })).toContainText('deployer → deploy_serving');
    await expect(rows.filter({ hasText: `m-list-a-${stamp}` }).locator('[data-production]')).toContainText('production');
    await expect(rows.filter({ hasText: `m-list-b-${stamp}` })).toContainText('staging');
    await expect(rows.filter({ hasText: `m-list-b-${stamp}` }).locator('[data-production]')).toHaveCount(0);
    // listing decided nothing
    expect(await statusOf(request, a.approval_id)).toBe('pending');
    expect(await statusOf(request, b.approval_id)).toBe('pending');

    // one in production, one high-risk elsewhere: different words, so the step asks for "approve all"
    await dialog.getByLabel('Type approve all to approve').fill('approve all');
    await dialog.getByRole('button', { name: 'Approve 2 requests' }).click();
    for (const id of [a.approval_id, b.approval_id]) await expect(page.locator(`[data-approval-id="${id}"]`)).toHaveCount(0);
    expect(await statusOf(request, a.approval_id)).toBe('approved');
    expect(await statusOf(request, b.approval_id)).toBe('approved');
    await expect(page.getByRole('status')).toContainText(`Approved: deployer → deploy_serving (model_id m-list-b-${stamp}, env staging)`);
  });

  test('the tab counter and the heading agree after a decision, a new request and one decided elsewhere', async ({ page, request }) => {
    const stamp = Date.now();
    const first = await deployerChecks(request, `m-count-a-${stamp}`);
    await deployerChecks(request, `m-count-b-${stamp}`);
    await page.clock.install();
    await openQueue(page);
    const tab = page.getByRole('link', { name: /^Pending \(\d+\)$/ });
    const heading = page.getByRole('heading', { name: /waiting, oldest first$/ });
    const n = Number((await tab.textContent())?.match(/\d+/)?.[0]);
    expect(n).toBeGreaterThanOrEqual(2);
    await expect(heading).toHaveText(`${n} waiting, oldest first`);
    await expect(page.locator('[data-approval-id]')).toHaveCount(n);

    const agree = async (count: number) => {
      await expect(tab).toHaveText(`Pending (${count})`);
      await expect(heading).toHaveText(`${count} waiting, oldest first`);
      await expect(page.locator('[data-approval-id]')).toHaveCount(count);
    };

    await page.locator(`[data-approval-id="${first.approval_id}"]`).getByRole('button', { name: 'Approve…' }).click();
    await page.getByRole('dialog', { name: 'Approve this request?' }).getByLabel('Type prod to approve').fill('prod');
    await page.getByRole('dialog', { name: 'Approve this request?' }).getByRole('button', { name: /^Approve/ }).click();
    await agree(n - 1);

    const third = await deployerChecks(request, `m-count-c-${stamp}`);
    await pollNow(page);
    await agree(n);

    expect((await request.post(`/api/v1/approvals/${third.approval_id}/reject`, { headers: admin, data: { reason: 'not now' } })).ok()).toBe(true);
    await pollNow(page);
    await agree(n - 1);
  });

  test('duplicates name the argument that tells them apart', async ({ page, request }) => {
    const stamp = Date.now();
    const a = await deployerChecks(request, `m-twin-a-${stamp}`);
    const b = await deployerChecks(request, `m-twin-b-${stamp}`);
    await openQueue(page);
    const headA = page.locator(`[data-approval-id="${a.approval_id}"]`).getByRole('heading');
    const headB = page.locator(`[data-approval-id="${b.approval_id}"]`).getByRole('heading');
    // other specs may leave staging deploys waiting: the environment is then named too
    await expect(headA).toHaveText(new RegExp(`^deployer wants to run deploy_serving · model_id m-twin-a-${stamp}(, env prod)?$`));
    await expect(headB).toHaveText(new RegExp(`^deployer wants to run deploy_serving · model_id m-twin-b-${stamp}(, env prod)?$`));
  });

  test('two-person gate: progress, who gave the first approval, and no second approve by the same person (API mocked)', async ({ page, request }) => {
    // The UI half of the two-person gate, against a mocked list: a real pending request, re-dressed as a
    // two-person gate, so that this test does not depend on the server's gate configuration.
    const model = `m-2p-${Date.now()}`;
    const asked = await deployerChecks(request, model);
    const real = (await (await request.get(`/api/v1/approvals/${asked.approval_id}`, { headers: admin })).json()) as Record<string, unknown>;
    const at = Date.now() / 1000 - 125;
    const fakes = {
      byMe: { ...real, id: 'apr_e2e_two_person_mine', gate_description: 'Production deployments change what customers see.', risk: 'high', approvals_required: 2, approvals: [{ by: 'olivia', role: 'operator', at, reason: null }] },
      byOther: { ...real, id: 'apr_e2e_two_person_other', arguments: { model_id: `${model}-o`, env: 'prod' }, risk: 'high', approvals_required: 2, approvals: [{ by: 'sam', role: 'operator', at, reason: null }] },
      none: { ...real, id: 'apr_e2e_two_person_none', arguments: { model_id: `${model}-n`, env: 'prod' }, risk: 'high', approvals_required: 2, approvals: [] as unknown[] },
    };
    await page.route(
      (url) => url.pathname === '/api/v1/approvals' && url.searchParams.get('status') === 'pending',
      async (route) => {
        const res = await route.fetch();
        const body = (await res.json()) as { approvals: Record<string, unknown>[] };
        await route.fulfill({ response: res, json: { approvals: [...body.approvals.filter((a) => a.id !== asked.approval_id), fakes.byMe, fakes.byOther, fakes.none] } });
      },
    );
    await page.route(
      (url) => url.pathname === `/api/v1/approvals/${fakes.none.id}/approve`,
      async (route) => {
        fakes.none = { ...fakes.none, approvals: [{ by: 'olivia', role: 'operator', at: Date.now() / 1000, reason: null }] };
        await route.fulfill({ json: fakes.none });
      },
    );
    await page.setViewportSize({ width: 1440, height: 900 });
    await openQueue(page);

    const mine = page.locator(`[data-approval-id="${fakes.byMe.id}"]`);
    await expect(mine).toBeVisible({ timeout: 10_000 }); // after the first poll
    await expect(mine.getByTestId('approval-progress')).toHaveText(/1 of 2 approvals · approved by olivia \(you\) 2 min ago/);
    await expect(mine).toContainText('Production deployments change what customers see.');
    await expect(mine.locator('[data-risk]')).toHaveText(/high risk/i);
    await expect(mine.getByRole('button', { name: 'Approve…' })).toHaveCount(0);
    await expect(mine).toContainText('a second operator must approve it');
    await mine.focus();
    await page.keyboard.press('a');
    await expect(page.getByRole('dialog')).toHaveCount(0);
    await expect(page.getByRole('status')).toContainText('a second operator must approve it');
    await mine.screenshot({ path: `${SCREENS}/approvals-two-person-card-1440.png` });

    const other = page.locator(`[data-approval-id="${fakes.byOther.id}"]`);
    await expect(other.getByTestId('approval-progress')).toHaveText(/1 of 2 approvals · approved by sam 2 min ago/);
    await other.getByRole('button', { name: 'Approve…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Approve this request?' });
    await expect(dialog).toContainText('This completes 2 of 2 approvals (first approval by sam)');
    await page.keyboard.press('Escape');
    await expect(dialog).toHaveCount(0);

    const none = page.locator(`[data-approval-id="${fakes.none.id}"]`);
    await expect(none.getByTestId('approval-progress')).toHaveText(/0 of 2 approvals/);
    await none.getByRole('button', { name: 'Approve…' }).click();
    await expect(dialog).toContainText('This is approval 1 of 2');
    await page.screenshot({ path: `${SCREENS}/approvals-two-person-confirm-1440.png` });
    await dialog.getByLabel('Type prod to approve').fill('prod');
    await dialog.getByRole('button', { name: /^Approve/ }).click();
    await expect(page.getByRole('status')).toContainText(`First of two approvals given: deployer → deploy_serving (model_id ${model}-n, env prod); a second operator must approve.`);
    await expect(none).toBeVisible();
    await expect(none.getByTestId('approval-progress')).toHaveText(/1 of 2 approvals · approved by olivia \(you\)/);
    await expect(none.getByRole('button', { name: 'Approve…' })).toHaveCount(0);
    // the real request behind the mocks was never decided
    expect(await statusOf(request, asked.approval_id)).toBe('pending');
  });

  test('screens at 1440 and 390 px wide', async ({ page, request }) => {
    const stamp = Date.now();
    await deployerChecks(request, `m-screen-a-${stamp}`);
    const b = await deployerChecks(request, `m-screen-b-${stamp}`, 'staging');
    for (const [w, h] of [
      [1440, 900],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width: w, height: h });
      await openQueue(page, { signedIn: w !== 1440 });
      await page.screenshot({ path: `${SCREENS}/approvals-queue-${w}.png`, fullPage: w === 390 ? false : true });
      await page.keyboard.press('j');
      await page.keyboard.press('a');
      const dialog = page.getByRole('dialog', { name: 'Approve this request?' });
      await expect(dialog).toBeVisible();
      await page.screenshot({ path: `${SCREENS}/approvals-confirm-${w}.png` });
      await page.keyboard.press('Escape');
      await expect(dialog).toHaveCount(0);
      const card = page.locator(`[data-approval-id="${b.approval_id}"]`);
      await card.getByLabel('Select').check();
      await page.locator('[data-approval-id]').first().getByLabel('Select').check();
      await page.getByRole('button', { name: 'Approve selected…' }).click();
      const bulk = page.getByRole('dialog', { name: 'Approve 2 requests?' });
      await expect(bulk).toBeVisible();
      await page.screenshot({ path: `${SCREENS}/approvals-bulk-${w}.png` });
      await page.keyboard.press('Escape');
      await expect(bulk).toHaveCount(0);
      // and the page never scrolls sideways
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    }
  });
});

/**
 * A real two-person gate, end to end: a server of its own whose deploy gate needs two approvers (its config is a
 * copy, changed in a temporary folder). The admin gives the first approval over REST; olivia gives the second in the
 * browser; then olivia gives a first approval herself and cannot give the second.
 */
test.describe('a two-person gate against the real server', () => {
  test.describe.configure({ timeout: 90_000 });
  let server: IsolatedServer;
  let deployerToken = '';

  test.beforeAll(async () => {
    // A server of its own (and CLI calls) starting: more than one test's time on a busy machine.
    test.setTimeout(90_000);
    server = isolatedServer(E2E.port + 61);
    // The copy's deploy gate takes two approvers; its other gates (and the policy tests that name them) stay as shipped.
    const gates = join(server.configDir, 'gates.yaml');
    const shipped = readFileSync(gates, 'utf8');
    const twoPerson = shipped.replace(/^  - id: deploy\n/m, '  - id: deploy\n    approvers: { roles: [operator, admin], count: 2 }\n');
    expect(twoPerson).not.toBe(shipped);
    writeFileSync(gates, twoPerson);
    await server.start();
    const olivia = user('olivia');
    expect((await server.swarm('users', 'add', 'olivia', '--role', olivia.role, '--password', olivia.password)).code).toBe(0);
    const token = await server.swarm('tokens', 'add', '--agent', 'deployer');
    expect(token.code).toBe(0);
    deployerToken = /^\s+(\S{20,})\s*$/m.exec(token.out)?.[1] ?? '';
    expect(deployerToken).not.toBe('');
  });
  test.afterAll(async () => {
    await server?.kill('SIGTERM');
  });

  const ask = async (model: string) => {
    const res = await fetch(`${server.url}/api/v1/permissions/check`, {
      method: 'POST',
      headers: { authorization: `Bearer ${deployerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: model, env: 'prod' } }),
    });
    const body = (await res.json()) as { decision: string; approval_id: string };
    expect(body.decision).toBe('ASK');
    return body.approval_id;
  };
  const adminApi = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, { ...init, headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' } });

  test('1 of 2 shows who approved; the second approval completes it; the first approver cannot give the second', async ({ page }) => {
    const stamp = Date.now();
    const first = await ask(`m-2p-a-${stamp}`);
    const mine = await ask(`m-2p-b-${stamp}`);
    const given = (await (await adminApi(`/api/v1/approvals/${first}/approve`, { method: 'POST', body: '{}' })).json()) as { status: string; approvals: unknown[] };
    expect(given).toMatchObject({ status: 'pending', approvals: [{ by: 'admin' }] });

    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${server.url}/login`);
    await signInWithForm(page, 'olivia');
    await page.goto(`${server.url}/approvals`);
    await expect(page.locator('section[data-ready="true"]')).toBeVisible();

    const card = page.locator(`[data-approval-id="${first}"]`);
    await expect(card.getByTestId('approval-progress')).toHaveText(/1 of 2 approvals · approved by admin (just now|\d+ min ago)/);
    await expect(card).toContainText('Deployments change what customers see.');
    await expect(card.locator('[data-risk]')).toHaveText(/high risk/i);
    await card.getByRole('button', { name: 'Approve…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Approve this request?' });
    await expect(dialog).toContainText('This completes 2 of 2 approvals (first approval by admin)');
    await page.keyboard.type('prod');
    await page.keyboard.press('Enter');
    await expect(page.getByRole('status')).toContainText(`Approved: deployer → deploy_serving (model_id m-2p-a-${stamp}, env prod)`);
    await expect(card).toHaveCount(0);
    expect(((await (await adminApi(`/api/v1/approvals/${first}`)).json()) as { status: string; deciders: string[] })).toMatchObject({ status: 'approved', deciders: ['admin', 'olivia'] });

    const other = page.locator(`[data-approval-id="${mine}"]`);
    await other.getByRole('button', { name: 'Approve…' }).click();
    await expect(dialog).toContainText('This is approval 1 of 2');
    await dialog.getByLabel('Type prod to approve').fill('prod');
    await dialog.getByRole('button', { name: /^Approve/ }).click();
    await expect(page.getByRole('status')).toContainText(`First of two approvals given: deployer → deploy_serving (model_id m-2p-b-${stamp}, env prod); a second operator must approve.`);
    await expect(other.getByTestId('approval-progress')).toHaveText(/1 of 2 approvals · approved by olivia \(you\)/);
    await expect(other.getByRole('button', { name: 'Approve…' })).toHaveCount(0);
    await expect(other).toContainText('You gave the first approval; a second operator must approve it.');
    await nextPoll(page); // a poll later, still so
    await expect(other.getByRole('button', { name: 'Approve…' })).toHaveCount(0);
    await expect(page.getByRole('link', { name: /^Pending \(\d+\)$/ })).toHaveText('Pending (1)');
    await expect(page.getByRole('heading', { name: /waiting, oldest first$/ })).toHaveText('1 waiting, oldest first');
    await other.screenshot({ path: `${SCREENS}/approvals-two-person-real-1440.png` });
    // and the server refuses a second approval by the same person
    const again = await page.request.post(`${server.url}/api/v1/approvals/${mine}/approve`, { data: {} });
    expect(again.status()).toBe(403);

    // Both people of the decision, in order: in History, found by either, and on the request's own link.
    for (const person of ['admin', 'olivia']) {
      await page.goto(`${server.url}/approvals?tab=history&decided_by=${person}`);
      const row = page.getByRole('row').filter({ hasText: `m-2p-a-${stamp}` });
      await expect(row).toContainText('admin, then olivia');
    }
    await page.goto(`${server.url}/approvals?request=${first}`);
    await expect(page.getByTestId('deep-link-result')).toContainText('Approved by admin, then olivia');
  });
});
