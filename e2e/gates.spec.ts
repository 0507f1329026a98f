/**
 * Gates from config/gates.yaml against the real built server: a two-person gate needs two different operators in the
 * browser. A REST caller gated only where the gate's condition holds is tests/gates-config.test.ts (issue 43).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { E2E } from './fixtures/accounts';
import { isolatedServer, type IsolatedServer } from './fixtures/isolated-server';
import { GATES_YAML } from '../lib/test-support/config-texts';

test.describe.configure({ mode: 'serial', timeout: 90_000 });

const PASSWORD = 'gates-e2e-password';

let server: IsolatedServer;
let agentToken = '';

/** The swarm CLI against the isolated server's database; fails the test when the command fails. */
async function swarm(...args: string[]): Promise<string> {
  const r = await server.swarm(...args);
  if (r.code !== 0) throw new Error(`swarm ${args.join(' ')} failed: ${r.out}`);
  return r.out;
}

/** What a Python agent does: one JSON POST with its bearer token, nothing from this project's code. */
const restCheck = (tool: string, args: Record<string, unknown>) =>
  server.check<{ decision: string; rule_source: string; approval_id: string | null; trace: { rule_source: string; decision: string }[] }>(agentToken, { agent: 'deployer', tool, arguments: args });

const signInAs = (page: Page, username: string) => server.signIn(page, username, PASSWORD);

test.beforeAll(async () => {
  // A server of its own (and CLI calls) starting: more than one test's time on a busy machine.
  test.setTimeout(90_000);
  server = isolatedServer(E2E.port + 71);
  writeFileSync(join(server.configDir, 'gates.yaml'), GATES_YAML);
  await server.start();
  await swarm('users', 'add', 'olga', '--role', 'operator', '--password', PASSWORD);
  await swarm('users', 'add', 'otto', '--role', 'operator', '--password', PASSWORD);
  agentToken = /swt_[A-Za-z0-9_-]+/.exec(await swarm('tokens', 'add', '--agent', 'deployer'))![0];
});

test.afterAll(async () => {
  await server.kill('SIGTERM');
});

test('a two-person deploy needs two different operators', async ({ browser }) => {
  const model = `m-2p-${Date.now()}`;
  const asked = await restCheck('deploy_serving', { model_id: model, env: 'prod' });
  expect(asked).toMatchObject({ decision: 'ASK', rule_source: 'hitl:deploy' });
  // staging is not gated by this file
  expect((await restCheck('deploy_serving', { model_id: model, env: 'staging' })).decision).toBe('ALLOW');

  const first = await browser.newPage();
  await signInAs(first, 'olga');
  await first.goto(`${server.url}/approvals`);
  const card = first.locator(`[data-approval-id="${asked.approval_id}"]`);
  await expect(card).toContainText('0 of 2 approvals');
  await card.getByRole('button', { name: /^Approve/ }).click();
  const dialog = first.getByRole('dialog');
  await expect(dialog).toContainText('deploy_serving');
  await expect(dialog).toContainText(model);
  // production: the environment is typed before Enter approves (the approvals page's deliberate second step)
  await first.keyboard.type('prod');
  await first.keyboard.press('Enter');
  await expect(card).toContainText('1 of 2 approvals');
  await expect(card).toContainText('olga');
  await expect(card.getByRole('button', { name: /^Approve/ })).toHaveCount(0);
  // still asking: one approval is not enough
  expect((await restCheck('deploy_serving', { model_id: model, env: 'prod' })).decision).toBe('ASK');
  // the same person cannot give the second approval through the API either
  const again = await first.request.post(`${server.url}/api/v1/approvals/${asked.approval_id}/approve`, { data: {} });
  expect(again.status()).toBe(403);

  const second = await browser.newPage();
  await signInAs(second, 'otto');
  await second.goto(`${server.url}/approvals`);
  const card2 = second.locator(`[data-approval-id="${asked.approval_id}"]`);
  await expect(card2).toContainText('1 of 2 approvals');
  await card2.getByRole('button', { name: /^Approve/ }).click();
  await second.keyboard.type('prod');
  await second.keyboard.press('Enter');
  await expect(card2).toHaveCount(0);

  const ran = await restCheck('deploy_serving', { model_id: model, env: 'prod' });
  expect(ran).toMatchObject({ decision: 'ALLOW', rule_source: 'hitl:deploy' });
  expect((await restCheck('deploy_serving', { model_id: model, env: 'prod' })).decision).toBe('ASK');
  await first.close();
  await second.close();
});
