/**
 * The client package in the browser's company, against the real built server as `npm start` runs it (issue 40): an
 * AI SDK run waits while an operator approves in /approvals, then runs once. What the client and its adapters do
 * without a page (every framework, every decision, fail-closed) is tests/client-adapters.test.ts, against the route
 * handlers in process (issue 43).
 */
import { expect, test } from '@playwright/test';
import { generateText, stepCountIs, type ToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { tool } from 'ai';
import { z } from 'zod';
import { SwarmClient } from '../packages/client/src/index';
import { withSwarm } from '../packages/client/src/ai-sdk';
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

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

/** A language model that makes these tool calls in its first step, then answers with text. */
function scriptedModel(calls: { id: string; tool: string; input: Record<string, unknown> }[], before?: () => Promise<void>) {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      if (step++ === 0) {
        await before?.();
        return { content: calls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.tool, input: JSON.stringify(c.input) })), finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] };
      }
      return { content: [{ type: 'text' as const, text: 'done' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] };
    },
  });
}

/** The deployer's tools, each counting its runs and the arguments it ran with. */
function deployerTools() {
  const ran: { tool: string; input: Record<string, unknown> }[] = [];
  const tools = {
    deploy_serving: tool({
      description: 'Deploy a model to serving.',
      inputSchema: z.object({ model_id: z.string(), env: z.string() }),
      execute: async (input) => {
        ran.push({ tool: 'deploy_serving', input });
        return { deployed: input.model_id };
      },
    }),
    monitor_drift: tool({
      description: 'Read the drift of a model.',
      inputSchema: z.object({ model_id: z.string() }),
      execute: async (input) => {
        ran.push({ tool: 'monitor_drift', input });
        return { drift: 0.01 };
      },
    }),
    export_raw_data: tool({
      description: 'Export raw rows.',
      inputSchema: z.object({ dataset_id: z.string() }),
      execute: async (input) => {
        ran.push({ tool: 'export_raw_data', input });
        return { rows: 1000 };
      },
    }),
    send_email: tool({
      description: 'Send an e-mail.',
      inputSchema: z.object({ to: z.string(), subject: z.string(), bcc: z.string().optional() }),
      execute: async (input) => {
        ran.push({ tool: 'send_email', input });
        return { sent: true };
      },
    }),
  } satisfies ToolSet;
  return { tools, ran };
}

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
