/**
 * The client package in the browser's company, against the real built server as `npm start` runs it (issue 40): an
 * AI SDK run waits while an operator approves in /approvals, then runs once. What the client and its adapters do
 * without a page (every framework, every decision, fail-closed) is tests/client-adapters.test.ts, against the route
 * handlers in process (issue 43).
 */
import { expect, test } from '@playwright/test';
import { generateText, stepCountIs } from 'ai';
import { SwarmClient } from '../packages/client/src/index';
import { withSwarm } from '../packages/client/src/ai-sdk';
import { deployerTools, scriptedModel } from '../lib/test-support/ai-sdk-agent';
import { E2E } from './fixtures/accounts';
import { isolatedServer } from './fixtures/isolated-server';

const server = isolatedServer(E2E.port + 81, { as: 'npm start' });
let deployerToken = '';

test.describe.configure({ mode: 'serial', timeout: 90_000 });

test.beforeAll(async () => {
  await server.start();
  const agent = await server.swarm('tokens', 'add', '--agent', 'deployer');
  expect(agent.code, agent.out).toBe(0);
  deployerToken = /swt_[A-Za-z0-9_-]+/.exec(agent.out)![0];
  const olivia = await server.swarm('users', 'add', 'olivia', '--role', 'operator', '--password', 'olivia-password-12345');
  expect(olivia.code, olivia.out).toBe(0);
});

test.afterAll(async () => {
  await server.kill('SIGTERM');
});

const client = () => new SwarmClient({ url: server.url, token: deployerToken, agent: 'deployer' });


test.describe('in the browser', () => {
  test('an AI SDK run waits while an operator approves in /approvals; the call then runs once', async ({ page }) => {
    const { tools, ran } = deployerTools();
    const model = scriptedModel([{ id: 'call_browser', tool: 'deploy_serving', input: { model_id: 'm-browser', env: 'staging' } }]);
    const run = generateText({ model, tools: withSwarm(tools, client(), { waitMs: 60_000 }), prompt: 'Deploy m-browser to staging.', stopWhen: stepCountIs(2) });
    await server.signIn(page, 'olivia', 'olivia-password-12345');
    await page.goto(`${server.url}/approvals`);
    const card = page.locator('[data-approval-id]').filter({ hasText: 'm-browser' });
    await expect(card).toContainText('deployer wants to run deploy_serving');
    expect(ran).toEqual([]);
    await card.getByRole('button', { name: 'Approve…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Approve this request?' });
    // A high-risk call: a second, deliberate step before Approve counts.
    await dialog.getByLabel('Type deploy_serving to approve').fill('deploy_serving');
    await dialog.getByRole('button', { name: /^Approve/ }).click();
    await expect(page.getByRole('status')).toContainText('Approved: deployer → deploy_serving');
    await run;
    expect(ran).toEqual([{ tool: 'deploy_serving', input: { model_id: 'm-browser', env: 'staging' } }]);
  });
});
