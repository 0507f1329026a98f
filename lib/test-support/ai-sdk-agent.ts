/**
 * Test fixture shared by the in-process client tests and the browser test of the client: a scripted AI SDK model (its
 * mock language model, making given tool calls in its first step) and the deployer's tools, each counting its runs.
 */
import { tool, type ToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

export const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

/** A language model that makes these tool calls in its first step, then answers with text. */
export function scriptedModel(calls: { id: string; tool: string; input: Record<string, unknown> }[], before?: () => Promise<void>) {
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
export function deployerTools() {
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
