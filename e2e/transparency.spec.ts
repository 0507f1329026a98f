import { expect, test, type Page } from '@playwright/test';
import { E2E } from './fixtures/accounts';
import { signIn } from './fixtures/session';

const auth = { authorization: `Bearer ${E2E.adminToken}` };
const SCREENS = 'test-results/screens';

const flagsTable = (page: Page) => page.getByRole('table', { name: 'Feature flags by tier' });
const flagRow = (page: Page, name: string) => flagsTable(page).locator(`tr[data-flag="${name}"]`);

test.describe('/transparency', () => {
  test('a viewer sees every tier, the invariant label, the sources in force and no controls', async ({ page }) => {
    await signIn(page, 'victor');
    await page.goto('/transparency');
    await expect(page.getByRole('heading', { level: 1, name: 'Transparency' })).toBeVisible();

    const table = flagsTable(page);
    for (const tier of ['Invariants', 'Flags', 'Experiments']) await expect(table.getByRole('rowheader', { name: new RegExp(`^${tier} \\(`) })).toBeVisible();
    await expect(flagRow(page, 'audit_trail_security_events')).toContainText('Invariant');
    await expect(flagRow(page, 'audit_trail_security_events')).toContainText('On');
    await expect(table.getByText('Invariant', { exact: true })).toHaveCount(3);
    await expect(flagRow(page, 'plugin_shell_hooks_enabled')).toContainText('Experiment');
    await expect(flagRow(page, 'external_web_access')).toContainText(/Off.*from default/s);
    await expect(flagRow(page, 'auto_fairness_audit')).toContainText('fairness_audit');

    // The rule sources in force: the six sources (the MCP tool pins among them), the BFSI profile's policy rules and the
    // agents' allowlists.
    await expect(page.getByRole('table', { name: 'Registered rule sources' }).getByRole('row')).toHaveCount(7);
    await expect(page.getByRole('table', { name: 'YAML policy rules' })).toContainText('policy:bfsi/no-pii-export');
    await expect(page.getByRole('table', { name: 'Agents and their allowed tools' })).toContainText('evaluator');
    // The operator's policy file (empty: the BFSI rules come from the profile, which names its folder).
    await expect(page.getByText(/permission_policies\.yaml$/)).toBeVisible();
    await expect(page.getByText('config/profiles/bfsi', { exact: true })).toBeVisible();

    // The hooks in force (config/hooks.yaml ships drop-bcc), each with what it does.
    const hooks = page.getByRole('table', { name: 'Hooks in force' });
    await expect(hooks.getByRole('row').filter({ hasText: 'hook:drop-bcc' })).toContainText('Rewrites the arguments: removes bcc, cc_hidden');
    await expect(hooks).toContainText('Before a tool call');

    await expect(page.getByRole('button', { name: /^Turn (on|off) / })).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Print or save as PDF' })).toBeVisible();
    await page.screenshot({ path: `${SCREENS}/transparency-viewer.png`, fullPage: true });

    // Print: as wide as an A4 landscape sheet's printable area (273 mm at 96 dpi), which the print stylesheet asks for.
    await page.setViewportSize({ width: 1032, height: 800 });
    await page.emulateMedia({ media: 'print' });
    await expect(page.getByRole('navigation', { name: 'Console' })).toBeHidden();
    await expect(page.getByRole('button', { name: 'Print or save as PDF' })).toBeHidden();
    await expect(page.getByRole('form', { name: 'Filter the flag history' })).toBeHidden();
    await page.screenshot({ path: `${SCREENS}/transparency-print.png`, fullPage: true });
  });

  test('an admin turns a flag off with a reason, the history shows it, the engine denies its tool, and the reset restores it', async ({ page, request }) => {
    try {
      await signIn(page, 'admin');
      await page.goto('/transparency');
      const row = flagRow(page, 'auto_fairness_audit');
      await expect(row).toContainText('On');

      await row.getByRole('button', { name: 'Turn off auto_fairness_audit' }).click();
      const dialog = page.getByRole('dialog', { name: 'Turn off auto_fairness_audit' });
      await expect(dialog).toBeVisible();
      await expect(dialog).toContainText('the engine denies fairness_audit');
      // A reason is required: saying nothing is refused before anything is sent.
      await dialog.getByRole('button', { name: 'Turn off' }).click();
      await expect(dialog.getByText('Give a reason')).toBeVisible();
      await expect(dialog.getByLabel(/Reason/)).toBeFocused();
      await page.keyboard.type('Fairness audit service is down, INC-4711');
      await page.screenshot({ path: `${SCREENS}/transparency-dialog.png` });
      await dialog.getByRole('button', { name: 'Turn off' }).click();
      await expect(dialog).toBeHidden();
      await expect(page.getByRole('status').filter({ hasText: 'Saved' })).toContainText('auto_fairness_audit is now off (override)');
      await expect(row).toContainText('Off');
      await expect(row).toContainText(/Off.*from override.*by admin/s);
      await expect(row).toContainText('Fairness audit service is down, INC-4711');
      // Focus is back on the row's button, which now offers the opposite.
      await expect(row.getByRole('button', { name: 'Turn on auto_fairness_audit' })).toBeFocused();

      const history = page.getByRole('table', { name: 'Flag history' });
      await expect(history.getByRole('row').nth(1)).toContainText(/auto_fairness_audit.*Override set.*On.*Off.*admin.*INC-4711/s);
      await page.screenshot({ path: `${SCREENS}/transparency-admin.png`, fullPage: true });

      // The engine now denies the guarded tool, attributed to the flag: in every process (the decision listener's too)
      // within a second of the change, as the product promises.
      const decide = async (dryRun: boolean) =>
        (await (await request.post('/api/v1/permissions/check', { headers: auth, data: { agent: 'evaluator', tool: 'fairness_audit', arguments: { model_id: 'm' }, ...(dryRun ? { dry_run: true } : {}) } })).json()) as Record<string, unknown>;
      await expect.poll(async () => (await decide(true)).decision, { timeout: 1_500 }).toBe('DENY');
      expect(await decide(false)).toMatchObject({ decision: 'DENY', rule_source: 'flag:auto_fairness_audit' });

      // The history filters by flag and by who, through the URL.
      await page.getByLabel('Flag', { exact: true }).selectOption('auto_fairness_audit');
      await page.getByLabel('Changed by').selectOption('admin');
      await page.getByRole('button', { name: 'Show changes' }).click();
      await expect(page).toHaveURL(/\/transparency\?name=auto_fairness_audit&by=admin#history$/);
      await expect(page.getByTestId('history-filter')).toContainText('Showing changes to auto_fairness_audit by admin');
      await expect(page.getByRole('table', { name: 'Flag history' }).getByRole('row')).toHaveCount(2);
      // The address ends in #history, so the viewport shows the filtered history.
      await page.screenshot({ path: `${SCREENS}/transparency-history-filtered.png` });
      await page.goto('/transparency?by=victor#history');
      await expect(page.getByText('No change matches this filter.')).toBeVisible();

      // Reset: the override goes, the flag falls back to its default, and the history says so.
      await page.goto('/transparency');
      await flagRow(page, 'auto_fairness_audit').getByRole('button', { name: 'Reset auto_fairness_audit' }).click();
      const reset = page.getByRole('dialog', { name: 'Reset auto_fairness_audit' });
      await reset.getByLabel(/Reason/).fill('Service restored');
      await reset.getByRole('button', { name: 'Reset' }).click();
      await expect(reset).toBeHidden();
      await expect(flagRow(page, 'auto_fairness_audit')).toContainText(/On.*from default/s);
      await expect(page.getByRole('table', { name: 'Flag history' }).getByRole('row').nth(1)).toContainText(/Override removed.*Off.*On.*admin.*Service restored/s);
      await expect.poll(async () => (await decide(true)).decision, { timeout: 1_500 }).toBe('ALLOW');
    } finally {
      // Whatever happened above, leave the flag as other specs expect it.
      const current = (await (await request.get('/api/v1/flags/auto_fairness_audit', { headers: auth })).json()) as { layer: string };
      if (current.layer === 'override') await request.delete('/api/v1/flags/auto_fairness_audit', { headers: auth, data: { reason: 'e2e cleanup' } });
    }
  });

  test('the bfsi profile is shown with its control mapping, and its rules are attributed to it', async ({ page }) => {
    await signIn(page, 'victor');
    await page.goto('/transparency');
    const section = page.getByRole('region', { name: 'Compliance profiles' });
    await expect(section).toContainText('selected by the environment variable SWARM_PROFILE');
    const bfsi = section.getByRole('article', { name: /Banks and insurers \(BFSI\)/ });
    await expect(bfsi).toContainText('bfsi');
    await expect(bfsi).toContainText(/Locks.*decision_log_all locked on/s);
    await expect(bfsi).toContainText(/Retention.*at least \d+ days/s);
    await expect(bfsi).toContainText(/Masking.*card_number/s);
    // bfsi keeps every decision (decision_log_all locked on): no sample of its own
    await expect(bfsi).toContainText(/Decision log.*allowed calls are kept as decision_log_all says; denials always/s);
    await expect(bfsi).toContainText('policy:bfsi/no-pii-export');
    const controls = bfsi.getByRole('table', { name: 'Control mapping of bfsi' });
    const control = controls.locator('tr[data-control="10.2.1"]');
    await expect(control).toContainText(/PCI DSS v4\.0.*10\.2\.1.*Audit logs are enabled.*invariant:audit_trail_security_events.*flag:decision_log_all.*decisions logged/s);
    await expect(controls.locator('tr[data-control="Art. 17"]')).toContainText('gate:deploy');
    await expect(controls).not.toContainText('not in force');

    // The YAML policy rules say where each rule comes from.
    await expect(page.getByRole('table', { name: 'YAML policy rules' }).getByRole('row', { name: /policy:bfsi\/no-pii-export/ })).toContainText('profile bfsi');
    // The locked flag names its profile, for a viewer too.
    await expect(flagRow(page, 'decision_log_all')).toContainText(/On.*from profile lock.*by bfsi/s);
  });

  test('invariants and locked flags offer no change; a refused attempt is in the history, marked as refused', async ({ page, request }) => {
    await signIn(page, 'admin');
    await page.goto('/transparency');
    const locked = flagRow(page, 'decision_log_all');
    await expect(locked).toContainText('Locked on by profile bfsi');
    await expect(locked.getByRole('button')).toHaveCount(0);
    const invariant = flagRow(page, 'audit_trail_security_events');
    await expect(invariant).toContainText('Invariant: cannot be turned off');
    await expect(invariant.getByRole('button')).toHaveCount(0);
    // A flag that can change still has its button.
    await expect(flagRow(page, 'cron_scheduler').getByRole('button', { name: 'Turn off cron_scheduler' })).toBeVisible();

    // The API still refuses, and the refusal is recorded.
    const res = await request.put('/api/v1/flags/audit_trail_security_events', { headers: auth, data: { value: false, reason: 'The audit table is too large, e2e' } });
    expect(res.status()).toBe(403);
    await page.reload();
    const history = page.getByRole('table', { name: 'Flag history' });
    const refused = history.locator('tr[data-action="refused"]').first();
    await expect(refused).toContainText(/audit_trail_security_events.*Refused: turn off.*stayed.*On/s);
    await expect(refused).toContainText('The audit table is too large, e2e');
    await expect(refused).toContainText(/Why refused:.*invariant/s);
    // It changed nothing: the flag is on, from its default, and its last change is not the refusal.
    await expect(invariant).toContainText(/On.*from default/s);

    for (const width of [1440, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto('/transparency');
      await page.screenshot({ path: `${SCREENS}/transparency-profiles-${width}.png`, fullPage: true });
    }
  });
});
