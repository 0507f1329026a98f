/**
 * Policy change control (issue 28) in the browser, on two servers of the real build on one PostgreSQL under the bfsi
 * profile (two admins other than the proposer approve): admin A reads and downloads the rule files in force, writes a
 * DENY rule in the browser (after an upload that does not compile) and reads its diff, impact and who may still vote, and
 * cannot approve it; a proposal whose policy test fails cannot be approved; admin B approves through the dialog on
 * server 1, admin C on server 2, and both servers deny the tool within a second of the last approval; a rollback
 * proposal approved by two restores it. Then, on SQLite without a profile, the same review is advisory.
 */
import { expect, test, type Browser, type Page } from '@playwright/test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPostgres, type PgCluster } from '@/lib/test-support/postgres';
import { E2E } from './fixtures/accounts';
import { isolatedServer, type IsolatedServer } from './fixtures/isolated-server';
import { PG_ADMIN_PASSWORD, pgServers, type PgServer, type PgServers } from './fixtures/pg-servers';

test.describe.configure({ mode: 'serial', timeout: 180_000 });

/** Where screenshots of the pages go when asked (POLICY_SCREENSHOTS=/some/folder): 1440 and 390 px wide. */
const SHOTS = process.env.POLICY_SCREENSHOTS;

const PASSWORD = 'policy-e2e-password';
const DRIFT_CALL = { agent: 'deployer', tool: 'monitor_drift', arguments: { model_id: 'm-policy' } };
const DENY_DRIFT = `rules:
  - id: pause-drift-monitoring
    decision: DENY
    reason: Drift monitoring is paused while the monitors are reviewed.
    match:
      tool: monitor_drift
`;
const KEEP_DRIFT_TEST = `tests:
  - name: drift monitoring stays allowed
    input: { agent: deployer, tool: monitor_drift, args: { model_id: m-1 } }
    expect: { decision: ALLOW }
`;

let cluster: PgCluster;
let servers: PgServers;
let s1: PgServer;
let s2: PgServer;
let agentToken: string;

async function check(server: { url: string }, token: string): Promise<{ decision?: string; rule_source?: string }> {
  const res = await fetch(`${server.url}/api/v1/permissions/check`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(DRIFT_CALL) });
  expect(res.status).toBe(200);
  return (await res.json()) as { decision?: string; rule_source?: string };
}

/** A browser of its own for one person, signed in on `url`. */
async function signedIn(browser: Browser, url: string, username: string, password: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${url}/login`);
  await page.getByLabel('User name').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('signed-in-user')).toContainText(username);
  return page;
}

async function shoot(page: Page, name: string): Promise<void> {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  const size = page.viewportSize() ?? { width: 1280, height: 720 };
  for (const width of [1440, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: `${SHOTS}/${name}-${width}.png`, fullPage: true });
  }
  await page.setViewportSize(size);
}

/**
 * Vote through the page's dialog: the dialog opens with the focus in the empty reason (never on its confirm button),
 * a confirm without a reason is refused in words, and the vote is sent only by the confirm button.
 */
async function voteInDialog(page: Page, act: 'Approve' | 'Reject', reason: string): Promise<void> {
  await page.getByRole('button', { name: `${act}…` }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByLabel('Reason (required)')).toBeFocused();
  await page.keyboard.press('Enter'); // a stray Enter writes a new line in the reason; it decides nothing
  const confirm = dialog.getByRole('button', { name: `${act} change` });
  await confirm.click();
  await expect(dialog.getByRole('alert')).toContainText('Write the reason first');
  await dialog.getByLabel('Reason (required)').fill(reason);
  await confirm.click();
  await expect(dialog).toBeHidden();
}

test.describe('under change control, on two PostgreSQL servers', () => {
  test.beforeAll(async () => {
    test.setTimeout(240_000);
    cluster = await startPostgres();
    cluster.createDatabase('policy');
    servers = pgServers(cluster.urlOf('policy'));
    // bfsi: two admins other than the proposer approve a change to the rules
    servers.env.SWARM_PROFILE = 'bfsi';
    s1 = servers.server(E2E.port + 1);
    s2 = servers.server(E2E.port + 2);
    await Promise.all([s1.start(), s2.start()]);
    for (const name of ['bea', 'carl']) expect((await servers.swarm('users', 'add', name, '--role', 'admin', '--password', PASSWORD)).code).toBe(0);
    const made = await servers.swarm('tokens', 'add', '--agent', 'deployer', '--name', 'policy e2e');
    expect(made.code, made.out).toBe(0);
    agentToken = /\b(swt_\S+)/.exec(made.out)![1]!;
    // Recorded calls for the impact to replay (bfsi logs every decision, allowed ones too).
    for (let i = 0; i < 3; i++) expect((await check(s1, agentToken)).decision).toBe('ALLOW');
  });

  test.afterAll(async () => {
    await s1?.kill('SIGKILL');
    await s2?.kill('SIGKILL');
    cluster?.stop();
  });

  let changeId: string;

  test('admin A reads and downloads the files in force, writes a DENY rule in the browser, reads its diff, impact and who may still vote, and cannot approve it', async ({ page }) => {
    await page.goto(`${s1.url}/login`);
    await page.getByLabel('User name').fill('admin');
    await page.getByLabel('Password').fill(PG_ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: /^Policy/ }).click();
    await expect(page.getByRole('heading', { level: 1, name: 'Policy changes' })).toBeVisible();
    await expect(page.getByTestId('change-control')).toContainText('Enforced');
    await expect(page.getByTestId('change-control')).toContainText('2 different people');
    await expect(page.getByTestId('active-revision')).toContainText('the files on disk at the first start');
    // The rule files in force, to read and to download.
    const inForce = page.getByRole('list', { name: 'Rule files in force' }).locator('[data-rule-file="permission_policies.yaml"]');
    await inForce.locator('summary').click();
    await expect(inForce.locator('pre')).toContainText('rules: []');
    const download = inForce.getByRole('link', { name: 'Download permission_policies.yaml' });
    await expect(download).toHaveAttribute('download', 'permission_policies.yaml');
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    expect(file.suggestedFilename()).toBe('permission_policies.yaml');

    // A file that does not compile: refused, each problem at its file:line:column, nothing proposed.
    await page.getByLabel('Why this change (required)').fill('Pause drift monitoring during the review');
    const policyInput = page.getByLabel(/^permission_policies\.yaml/);
    await policyInput.setInputFiles({ name: 'permission_policies.yaml', mimeType: 'text/yaml', buffer: Buffer.from('rules:\n  - id: broken\n    decision: MAYBE\n') });
    await page.getByRole('button', { name: 'Propose this change' }).click();
    const problems = page.getByRole('list', { name: 'Problems in the proposed files' });
    await expect(problems).toContainText(/permission_policies\.yaml:\d+:\d+/);
    await expect(page).toHaveURL(/\/policy$/);

    // The rule written in the browser instead: the editor starts from the text in force, and the upload is then ignored.
    await page.getByRole('button', { name: 'Edit here permission_policies.yaml' }).click();
    const editor = page.getByLabel('New text of permission_policies.yaml');
    await expect(editor).toHaveValue(/rules: \[\]\s*$/);
    await expect(page.getByText('Unchanged from the text in force.')).toBeVisible();
    await editor.fill(DENY_DRIFT);
    await expect(page.getByText(/^Changed: this text is proposed instead of the file in force/)).toBeVisible();
    await page.getByRole('button', { name: 'Propose this change' }).click();
    await expect(page).toHaveURL(/\/policy\/prp_/);
    changeId = /\/policy\/(prp_[^/?#]+)/.exec(page.url())![1]!;
    await expect(page.getByTestId('proposal-message')).toHaveText('Pause drift monitoring during the review');
    await expect(page.getByTestId('proposal-status')).toContainText('0 of 2 approvals');
    // Who may still approve it: the two other administrators, never its proposer.
    await expect(page.getByTestId('may-still-vote')).toHaveText(/^2 more approvals needed\. May still approve it: bea, carl \(admin; not its proposer\)\.$/);
    // the diff: the rule's lines added, each marked with a + sign, the old empty list removed with a − sign
    const diff = page.getByRole('region', { name: 'Changes to permission_policies.yaml' });
    await expect(diff.locator('tr[data-diff="added"]', { hasText: 'decision: DENY' })).toContainText('+');
    await expect(diff.locator('tr[data-diff="removed"]', { hasText: 'rules: []' })).toContainText('−');
    // the impact: the recorded calls of monitor_drift would now be denied
    await expect(page.getByTestId('impact-summary')).toContainText(/[1-9]\d* newly denied/);
    await expect(page.getByRole('table', { name: 'Changed calls by tool' })).toContainText('monitor_drift');
    await expect(page.getByTestId('tests-result')).toContainText('passed');
    // the proposer: no Approve, the reason said, and the API refuses the vote too
    await expect(page.getByText('You proposed this change: someone else must approve it.')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Approve…' })).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Withdraw…' })).toBeVisible();
    const own = await page.request.post(`${s1.url}/api/v1/policy/proposals/${changeId}/votes`, { data: { vote: 'approve', reason: 'mine' } });
    expect(own.status()).toBe(403);
    await shoot(page, 'proposal-open');
  });

  test('a proposal whose policy test fails cannot be approved', async ({ browser }) => {
    const admin = await signedIn(browser, s1.url, 'admin', PG_ADMIN_PASSWORD);
    const made = await admin.request.post(`${s1.url}/api/v1/policy/proposals`, { data: { message: 'Same rule, tests that keep drift monitoring', files: { policy: DENY_DRIFT }, tests: KEEP_DRIFT_TEST } });
    expect(made.status(), await made.text()).toBe(200);
    const failing = ((await made.json()) as { id: string; tests: { failed: number } });
    expect(failing.tests.failed).toBe(1);
    await admin.context().close();

    const bea = await signedIn(browser, s1.url, 'bea', PASSWORD);
    await bea.goto(`${s1.url}/policy/${failing.id}`);
    await expect(bea.getByTestId('tests-result')).toContainText('1 failed');
    await expect(bea.getByText('drift monitoring stays allowed', { exact: true })).toBeVisible();
    await expect(bea.getByRole('button', { name: 'Approve…' })).toBeDisabled();
    await expect(bea.getByText(/Approve is disabled: 1 of its policy tests fail/)).toBeVisible();
    const refused = await bea.request.post(`${s1.url}/api/v1/policy/proposals/${failing.id}/votes`, { data: { vote: 'approve', reason: 'try anyway' } });
    expect(refused.status()).toBe(409);
    // the list: both proposals open, the failing one marked
    await bea.goto(`${s1.url}/policy`);
    await expect(bea.locator(`tr[data-proposal="${failing.id}"]`)).toContainText('✕ 1 failed');
    await expect(bea.locator(`tr[data-proposal="${changeId}"]`)).toContainText('● Open');
    await shoot(bea, 'policy-list');
    await bea.context().close();
  });

  test('B approves on server 1, C on server 2: both servers deny the tool within a second of the last approval', async ({ browser }) => {
    const bea = await signedIn(browser, s1.url, 'bea', PASSWORD);
    await bea.goto(`${s1.url}/policy/${changeId}`);
    await voteInDialog(bea, 'Approve', 'Reviewed the impact: only drift monitoring stops.');
    await expect(bea.getByTestId('proposal-status')).toContainText('1 of 2 approvals');
    expect((await check(s1, agentToken)).decision).toBe('ALLOW');

    const carl = await signedIn(browser, s2.url, 'carl', PASSWORD);
    await carl.goto(`${s2.url}/policy/${changeId}`);
    await expect(carl.getByRole('listitem').filter({ hasText: 'by bea' })).toContainText('Reviewed the impact');
    await carl.getByRole('button', { name: 'Approve…' }).click();
    const dialog = carl.getByRole('dialog');
    await expect(dialog).toContainText('Yours is the last approval needed');
    await expect(dialog.getByLabel('Reason (required)')).toBeFocused();
    await shoot(carl, 'approve-dialog');
    await dialog.getByLabel('Reason (required)').fill('Agreed with the review.');
    const voted = carl
      .waitForResponse((r) => r.url().endsWith(`/api/v1/policy/proposals/${changeId}/votes`) && r.request().method() === 'POST')
      .then((r) => ({ status: r.status(), at: Date.now() }));
    await dialog.getByRole('button', { name: 'Approve change' }).click();
    // Each server is asked again and again from the click on (a deadline, not a sleep); the first DENY of each is
    // compared with the moment the last approval was answered.
    const clicked = Date.now();
    const firstDeny = async (server: PgServer): Promise<number> => {
      while (Date.now() - clicked < 10_000) {
        const d = await check(server, agentToken);
        if (d.decision === 'DENY') {
          expect(d.rule_source).toBe('policy:pause-drift-monitoring');
          return Date.now();
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`${server.url} still allows monitor_drift 10 s after the last approval`);
    };
    const [answer, denied1, denied2] = await Promise.all([voted, firstDeny(s1), firstDeny(s2)]);
    expect(answer.status).toBe(200);
    console.log(`policy activation: click to answer ${answer.at - clicked} ms; answer to first DENY: server 1 ${denied1 - answer.at} ms, server 2 ${denied2 - answer.at} ms`);
    expect(denied1 - answer.at).toBeLessThan(1_000);
    expect(denied2 - answer.at).toBeLessThan(1_000);
    await expect(carl.getByTestId('proposal-status')).toContainText('Active on every server');
    await shoot(carl, 'proposal-active');
    await carl.context().close();
    await bea.context().close();
  });

  test('a rollback proposal, approved by two, restores the tool on both servers', async ({ browser }) => {
    const admin = await signedIn(browser, s2.url, 'admin', PG_ADMIN_PASSWORD);
    await admin.goto(`${s2.url}/policy`);
    const seed = admin.locator('tr[data-activation="1"]');
    await expect(seed).toContainText('Seed');
    await expect(admin.locator('tr[data-activation="2"]')).toContainText('in force');
    await seed.getByRole('button', { name: 'Propose rollback to activation 1' }).click();
    const dialog = admin.getByRole('dialog');
    await expect(dialog.getByLabel('Reason (required)')).toBeFocused();
    await dialog.getByLabel('Reason (required)').fill('The review is over: monitor drift again.');
    await dialog.getByRole('button', { name: 'Propose rollback' }).click();
    await expect(admin).toHaveURL(/\/policy\/prp_/);
    await expect(admin.getByRole('heading', { level: 1, name: 'Rollback proposal' })).toBeVisible();
    const rollbackId = /\/policy\/(prp_[^/?#]+)/.exec(admin.url())![1]!;
    await expect(admin.getByRole('region', { name: 'Changes to permission_policies.yaml' }).locator('tr[data-diff="removed"]', { hasText: 'decision: DENY' })).toBeVisible();
    await admin.context().close();

    for (const [name, server] of [['bea', s1], ['carl', s2]] as const) {
      const p = await signedIn(browser, server.url, name, PASSWORD);
      await p.goto(`${server.url}/policy/${rollbackId}`);
      await voteInDialog(p, 'Approve', `${name}: back to the seed`);
      await p.context().close();
    }
    const started = Date.now();
    for (const server of [s1, s2]) {
      await expect.poll(async () => (await check(server, agentToken)).decision, { timeout: 2_000, intervals: [20] }).toBe('ALLOW');
    }
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  test('a rule file edited on a server\'s disk is drift: shown on /transparency, never loaded', async ({ browser }) => {
    const admin = await signedIn(browser, s1.url, 'admin', PG_ADMIN_PASSWORD);
    await admin.goto(`${s1.url}/transparency`);
    await expect(admin.getByTestId('rules-under-change-control')).toContainText('the rules below come from the active revision');
    writeFileSync(join(servers.configDir, 'permission_policies.yaml'), DENY_DRIFT);
    await expect(async () => {
      await admin.reload();
      await expect(admin.getByRole('note', { name: 'Policy file drift' })).toContainText('Differs from the active revision; not loaded.', { timeout: 500 });
    }).toPass({ timeout: 15_000 });
    expect((await check(s1, agentToken)).decision).toBe('ALLOW');
    await admin.context().close();
  });
});

test.describe('without a profile that asks for it (SQLite)', () => {
  let server: IsolatedServer;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    server = isolatedServer(E2E.port + 3);
    server.env.SWARM_PROFILE = '';
    await server.start();
    expect((await server.swarm('users', 'add', 'bea', '--role', 'admin', '--password', PASSWORD)).code).toBe(0);
  });

  test.afterAll(async () => {
    await server?.kill();
  });

  test('proposals are advisory: approved by another admin, nothing is activated', async ({ browser }) => {
    const res = await fetch(`${server.url}/api/v1/policy/proposals`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Pause drift monitoring', files: { policy: DENY_DRIFT } }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const { id } = (await res.json()) as { id: string };
    const bea = await signedIn(browser, server.url, 'bea', PASSWORD);
    await bea.goto(`${server.url}/policy`);
    await expect(bea.getByTestId('change-control')).toContainText('proposals are advisory');
    await bea.goto(`${server.url}/policy/${id}`);
    await voteInDialog(bea, 'Approve', 'Fine to deploy.');
    await expect(bea.getByTestId('proposal-status')).toContainText('Approved (advisory)');
    await expect(bea.getByTestId('proposal-status')).toContainText('the files on disk stay the rules');
    const activations = await fetch(`${server.url}/api/v1/policy/activations`, { headers: { authorization: `Bearer ${server.token}` } });
    expect(((await activations.json()) as { activations: unknown[] }).activations).toEqual([]);

    // A file is removed by the form's checkbox (by keyboard): its diff shows every line gone.
    await bea.goto(`${server.url}/policy`);
    await bea.getByLabel('Why this change (required)').fill('Gates come from the profiles only');
    const remove = bea.getByRole('checkbox', { name: 'remove gates.yaml' });
    await remove.focus();
    await bea.keyboard.press('Space');
    await expect(remove).toBeChecked();
    await expect(bea.getByLabel(/^gates\.yaml/)).toBeDisabled();
    await bea.getByRole('button', { name: 'Propose this change' }).click();
    await bea.waitForURL(/\/policy\/prp_/);
    await expect(bea.getByRole('region', { name: 'Changes to gates.yaml' }).getByRole('heading')).toContainText(/removed \+0 −\d+/);
    await expect(bea.getByTestId('may-still-vote')).toHaveText(/^One more approval needed\. May still approve it: admin \(admin; not its proposer\)\.$/);
    await bea.context().close();
  });
});
