/**
 * The client package (packages/client) and its adapters, against the product's route handlers on a real SQLite file,
 * served over HTTP by tests/support/route-server.ts (issue 40; moved from e2e/client.spec.ts in issue 43, where the
 * browser's part stays): the Vercel AI SDK driven by its own mock language model with scripted tool calls, and the Claude Agent SDK's
 * canUseTool and hooks called as the SDK calls them, typed by its own types. A DENY recorded with the framework's tool
 * call id and read by the model; an ASK in each mode, approved or rejected by an operator, running once; a rewrite
 * hook's arguments; the server stopped in the middle of a run (nothing runs). The run that waits while an operator approves
 * in the browser is e2e/client.spec.ts.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { generateText, stepCountIs, type ModelMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { deployerTools, scriptedModel } from '@/lib/test-support/ai-sdk-agent';
import { z } from 'zod';
import type { PermissionResult, PreToolUseHookInput, PostToolUseHookInput } from '@anthropic-ai/claude-agent-sdk';
import { SwarmClient, UNREACHABLE } from '@/packages/client/src/index';
import { approvalFor, withoutHiddenTools, withSwarm, type Refusal } from '@/packages/client/src/ai-sdk';
import { claudeAgentPermissions, disallowedTools, type ClaudeAgentPermissions } from '@/packages/client/src/claude-agent-sdk';
import { swarmMiddleware, type ApprovalInterrupt } from '@/packages/client/src/langchain';
import { approvalFor as approvalForOa, withoutHiddenTools as usableOa, withSwarm as withSwarmOa } from '@/packages/client/src/openai-agents';
import { withSwarm as withSwarmMastra, type ApprovalSuspension } from '@/packages/client/src/mastra';
import { Mastra } from '@mastra/core';
import { Agent as MastraAgent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool as createMastraTool } from '@mastra/core/tools';
import { Agent as OaAgent, run as oaRun, setTracingDisabled, tool as oaTool, Usage, type Model as OaModel } from '@openai/agents-core';
import { createAgent, createMiddleware, FakeToolCallingModel, ToolMessage, tool as lcTool, type BaseMessage } from 'langchain';
import { Command, MemorySaver } from '@langchain/langgraph';
import { useTempServerEnv } from './support/in-process-api';

const env = useTempServerEnv('client-adapters');
const { getSqliteApp } = await import('@/lib/app');
const { createRouteServer } = await import('./support/route-server');
const { freePort } = await import('@/lib/server/serve');

const app = getSqliteApp();
const deployerToken = await app.auth.createToken({ agent: 'deployer' }, 'deployer');
const { token: operatorToken } = await app.auth.createUserWithToken({ username: 'olivia', role: 'operator', password: 'olivia-password-12345' }, 'olivia');

/** The route handlers over HTTP, on a port of their own that the test may stop and start again. */
const server = {
  url: '',
  port: 0,
  dbPath: process.env.SWARM_DB!,
  http: undefined as Server | undefined,
  async start(): Promise<void> {
    const http = createRouteServer();
    await new Promise<void>((r) => http.listen(server.port, '127.0.0.1', () => r()));
    server.http = http;
    server.port = (http.address() as AddressInfo).port;
    server.url = `http://127.0.0.1:${server.port}`;
  },
  async stop(): Promise<void> {
    const http = server.http;
    server.http = undefined;
    if (!http) return;
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
  },
};
/** A port nothing listens on. */
let nowherePort = 0;

beforeAll(async () => {
  await server.start();
  nowherePort = await freePort();
});

afterAll(async () => {
  await server.stop();
  app.close();
  env.remove();
});

const client = (over: Partial<ConstructorParameters<typeof SwarmClient>[0]> = {}) => new SwarmClient({ url: server.url, token: deployerToken, agent: 'deployer', ...over });
/** A client of a server that is not there. */
const unreachable = () => client({ url: `http://127.0.0.1:${nowherePort}`, retries: 0 });

/** An operator's decision on an approval request, over the API. */
async function decide(approvalId: string, how: 'approve' | 'reject', reason = 'change ticket CHG-40'): Promise<void> {
  const res = await fetch(`${server.url}/api/v1/approvals/${approvalId}/${how}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ reason }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

/** The audit row of a decision, read from the database file as an auditor's query would. */
function denialRow(decisionId: string): { tool_call_id: string | null; rule_source: string; tool_name: string } | undefined {
  const db = new Database(server.dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT tool_call_id, rule_source, tool_name FROM permission_denials WHERE decision_id = ?').get(decisionId) as never;
  } finally {
    db.close();
  }
}

/** The pending approval request of the deployer's deploy of `model`, from the queue an operator sees. */
async function pendingFor(model: string): Promise<string | undefined> {
  const res = await fetch(`${server.url}/api/v1/approvals?status=pending`, { headers: { authorization: `Bearer ${operatorToken}` } });
  const { approvals } = (await res.json()) as { approvals: { id: string; arguments: { model_id?: string } }[] };
  return approvals.find((a) => a.arguments.model_id === model)?.id;
}

/** A status of an approval request, as the server answers it. */
async function approvalStatus(id: string): Promise<string> {
  return ((await client().approval(id))?.status as string) ?? 'unknown';
}


/** The tool results the model was sent in its second step. */
function toolResultsSent(model: MockLanguageModelV3): Record<string, unknown> {
  const prompt = model.doGenerateCalls[1]?.prompt ?? [];
  const out: Record<string, unknown> = {};
  for (const m of prompt) {
    if (m.role !== 'tool') continue;
    for (const part of m.content) if (part.type === 'tool-result') out[part.toolCallId] = part.output.type === 'json' ? part.output.value : part.output;
  }
  return out;
}

describe('the client', () => {
  it('decides a call, a batch and the usable tools; a DENY carries the framework\'s tool call id into the audit row', async () => {
    const swarm = client();
    const denied = await swarm.check({ tool: 'export_raw_data', arguments: { dataset_id: 'd-1' }, toolCallId: 'call_client_1' });
    expect(denied).toMatchObject({ decision: 'DENY', rule_source: 'agent_allowlist', recorded: true });
    expect(denialRow(denied.decision_id!)).toEqual({ tool_call_id: 'call_client_1', rule_source: 'agent_allowlist', tool_name: 'export_raw_data' });
    const batch = await swarm.checkBatch([{ tool: 'monitor_drift', arguments: { model_id: 'm-1' } }, { tool: 'deploy_serving', arguments: { model_id: 'm-1', env: 'prod' }, dryRun: true }]);
    expect(batch.map((a) => a.decision)).toEqual(['ALLOW', 'ASK']);
    expect(await swarm.finished({ tool: 'monitor_drift', arguments: { model_id: 'm-1' } }, { decisionId: batch[0]!.decision_id, outcome: 'succeeded', result: { drift: 0.01 } })).toBe(true);
    expect(Object.fromEntries(await swarm.tools(['monitor_drift', 'deploy_serving', 'export_raw_data']))).toEqual({ monitor_drift: 'open', deploy_serving: 'gated', export_raw_data: 'hidden' });
  });

  it('fails closed: a wrong token, a server that is not there and one too slow are DENY answers naming why, never a throw', async () => {
    const wrong = await client({ token: 'swt_not-a-token-of-this-server' }).check({ tool: 'monitor_drift', arguments: { model_id: 'm-1' } });
    expect(wrong).toMatchObject({ decision: 'DENY', rule_source: 'client:refused', decision_id: null, recorded: false });
    expect(wrong.reason).toMatch(/^The permission server refused the request \(401\): .* monitor_drift was not run\.$/);
    // (a port that nothing listens on)
    const nowhere = await client({ url: `http://127.0.0.1:${nowherePort}`, retries: 1 }).check({ tool: 'monitor_drift', arguments: { model_id: 'm-1' } });
    expect(nowhere).toMatchObject({ decision: 'DENY', rule_source: UNREACHABLE, decision_id: null });
    expect(nowhere.reason).toBe(`The permission server at http://127.0.0.1:${nowherePort} could not be reached (ECONNREFUSED). monitor_drift was not run.`);
    // A server that takes the request and never answers.
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const slow = await client({ url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, timeoutMs: 300 }).check({ tool: 'monitor_drift', arguments: { model_id: 'm-1' } });
      expect(slow).toMatchObject({ decision: 'DENY', rule_source: UNREACHABLE });
      expect(slow.reason).toContain('did not answer within 300 ms');
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
    expect(() => new SwarmClient({ url: server.url, token: '' })).toThrow(/give the agent's API token/);
  });
});

describe('the Vercel AI SDK', () => {
  it('DENY: the tool never runs, the model reads the refusal, the denial is recorded with the SDK\'s tool call id', async () => {
    const { tools, ran } = deployerTools();
    const model = scriptedModel([{ id: 'call_ai_deny', tool: 'export_raw_data', input: { dataset_id: 'customers' } }]);
    const result = await generateText({ model, tools: withSwarm(tools, client()), prompt: 'Export the customers.', stopWhen: stepCountIs(2) });
    expect(ran).toEqual([]);
    const sent = toolResultsSent(model).call_ai_deny as Refusal;
    expect(sent).toMatchObject({ refused: true, decision: 'DENY', rule_source: 'agent_allowlist' });
    expect(denialRow(sent.decision_id!)).toMatchObject({ tool_call_id: 'call_ai_deny', tool_name: 'export_raw_data' });
    expect(result.text).toBe('done');
  });

  it('ALLOW: the tool runs with the arguments the server\'s rewrite hook left; tools the agent can never use are left out', async () => {
    const { tools, ran } = deployerTools();
    const model = scriptedModel([{ id: 'call_ai_mail', tool: 'send_email', input: { to: 'ops@swarm.example', subject: 'drift', bcc: 'rival@example.com' } }]);
    await generateText({ model, tools: withSwarm(tools, client()), prompt: 'Mail ops.', stopWhen: stepCountIs(2) });
    expect(ran).toEqual([{ tool: 'send_email', input: { to: 'ops@swarm.example', subject: 'drift' } }]);
    expect(Object.keys(await withoutHiddenTools(tools, client())).sort()).toEqual(['deploy_serving', 'monitor_drift', 'send_email']);
  });

  it('ASK, wait: the call is held until an operator approves, then runs once', async () => {
    const { tools, ran } = deployerTools();
    const swarm = client();
    const model = scriptedModel([{ id: 'call_ai_wait', tool: 'deploy_serving', input: { model_id: 'm-wait', env: 'prod' } }]);
    const run = generateText({ model, tools: withSwarm(tools, swarm, { waitMs: 60_000 }), prompt: 'Deploy m-wait.', stopWhen: stepCountIs(2) });
    // The operator decides once the request is in the queue (the run is held meanwhile).
    let id: string | undefined;
    await expect.poll(async () => (id = await pendingFor('m-wait')), { timeout: 10_000 }).toBeTruthy();
    expect(ran).toEqual([]);
    await decide(id!, 'approve');
    await run;
    expect(ran).toEqual([{ tool: 'deploy_serving', input: { model_id: 'm-wait', env: 'prod' } }]);
    expect(await approvalStatus(id!)).toBe('consumed');
  });

  it('ASK, interrupt: the run stops with the SDK\'s approval request carrying ours; resumed, it runs only as the operator decided', async () => {
    for (const operator of ['approve', 'reject'] as const) {
      const { tools, ran } = deployerTools();
      const guarded = withSwarm(tools, client(), { onAsk: 'interrupt' });
      const id = `call_ai_interrupt_${operator}`;
      const first = await generateText({ model: scriptedModel([{ id, tool: 'deploy_serving', input: { model_id: `m-${operator}`, env: 'prod' } }]), tools: guarded, prompt: 'Deploy.', stopWhen: stepCountIs(2) });
      const request = first.content.find((p) => p.type === 'tool-approval-request');
      expect(request, 'the run stopped for an approval').toBeTruthy();
      const ours = approvalFor(guarded, id)!;
      expect(ours.url).toBe(`${server.url}/approvals?request=${ours.approvalId}`);
      expect(ran).toEqual([]);
      await decide(ours.approvalId, operator);
      // The person chatting says yes either way: only the operator's decision counts.
      const messages: ModelMessage[] = [{ role: 'user', content: 'Deploy.' }, ...first.response.messages, { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request!.approvalId, approved: true }] }];
      const model = scriptedModel([]);
      await generateText({ model, tools: guarded, messages, stopWhen: stepCountIs(1) });
      if (operator === 'approve') {
        expect(ran).toEqual([{ tool: 'deploy_serving', input: { model_id: 'm-approve', env: 'prod' } }]);
        expect(await approvalStatus(ours.approvalId)).toBe('consumed');
      } else {
        expect(ran).toEqual([]);
        const sent = JSON.stringify(model.doGenerateCalls[0]!.prompt);
        expect(sent).toContain('"refused":true');
        expect(sent).toContain('hitl:deploy');
      }
    }
  });
});

describe('the Claude Agent SDK', () => {
  const signal = () => new AbortController().signal;
  let requests = 0;
  /** canUseTool as the SDK calls it: the tool, its input, and the options of one permission request. */
  async function canUse(swarm: ClaudeAgentPermissions, tool: string, input: Record<string, unknown>, toolUseID: string): Promise<PermissionResult> {
    const r = await swarm.canUseTool(tool, input, { signal: signal(), toolUseID, requestId: `req-${++requests}`, suggestions: [] });
    expect(r, 'canUseTool answers (null is only for answers sent out of band)').not.toBeNull();
    return r!;
  }
  const messageOf = (r: PermissionResult) => (r.behavior === 'deny' ? r.message : '');

  it('canUseTool: deny with the rule and the decision, allow with the rewritten input, ASK interrupts with the approval', async () => {
    const swarm = claudeAgentPermissions(client(), { onAsk: 'interrupt' });
    const denied = await canUse(swarm, 'export_raw_data', { dataset_id: 'customers' }, 'toolu_deny');
    expect(denied).toMatchObject({ behavior: 'deny', interrupt: false });
    expect(messageOf(denied)).toMatch(/\(agent_allowlist, decision [0-9a-f-]+\)$/);
    expect(denialRow(/decision ([0-9a-f-]+)\)$/.exec(messageOf(denied))![1]!)).toMatchObject({ tool_call_id: 'toolu_deny', tool_name: 'export_raw_data' });
    const allowed = await canUse(swarm, 'send_email', { to: 'ops@swarm.example', subject: 'hi', bcc: 'x@rival.example' }, 'toolu_mail');
    expect(allowed).toEqual({ behavior: 'allow', updatedInput: { to: 'ops@swarm.example', subject: 'hi' }, toolUseID: 'toolu_mail' });
    const asked = await canUse(swarm, 'deploy_serving', { model_id: 'm-claude', env: 'prod' }, 'toolu_deploy');
    expect(asked).toMatchObject({ behavior: 'deny', interrupt: true });
    const approvalId = /approval (apr_[A-Za-z0-9_-]+)/.exec(messageOf(asked))![1]!;
    await decide(approvalId, 'approve');
    // The resumed session tries the call again: it runs, once.
    expect(await canUse(swarm, 'deploy_serving', { model_id: 'm-claude', env: 'prod' }, 'toolu_deploy_2')).toMatchObject({ behavior: 'allow' });
    expect(await approvalStatus(approvalId)).toBe('consumed');
    // The tools the agent can never use, for the SDK's disallowedTools option.
    expect(await disallowedTools(client(), ['export_raw_data', 'deploy_serving', 'Bash'])).toEqual(['export_raw_data', 'Bash']);
  });

  it('canUseTool in wait mode: held until an operator decides; a rejection reaches the model; the server unreachable, denied', async () => {
    const swarm = claudeAgentPermissions(client(), { waitMs: 60_000 });
    for (const operator of ['approve', 'reject'] as const) {
      const model = `m-claude-wait-${operator}`;
      const held = canUse(swarm, 'deploy_serving', { model_id: model, env: 'prod' }, `toolu_wait_${operator}`);
      let id: string | undefined;
      await expect.poll(async () => (id = await pendingFor(model)), { timeout: 10_000 }).toBeTruthy();
      await decide(id!, operator, operator === 'reject' ? 'not in the change window' : 'CHG-40');
      const answer = await held;
      if (operator === 'approve') expect(answer).toMatchObject({ behavior: 'allow' });
      else {
        expect(answer).toMatchObject({ behavior: 'deny', interrupt: false });
        expect(messageOf(answer)).toMatch(/hitl:deploy/);
      }
    }
    const down = await canUse(claudeAgentPermissions(unreachable()), 'monitor_drift', { model_id: 'm-1' }, 'toolu_down');
    expect(down).toMatchObject({ behavior: 'deny' });
    expect(messageOf(down)).toMatch(/could not be reached .*\(client:unreachable\)$/);
  });

  it('PreToolUse and PostToolUse hooks: decided and reported with the SDK\'s tool_use id', async () => {
    const swarm = claudeAgentPermissions(client());
    const base = { session_id: 's-1', transcript_path: '/tmp/t.jsonl', cwd: '/tmp' };
    const pre: PreToolUseHookInput = { ...base, hook_event_name: 'PreToolUse', tool_name: 'export_raw_data', tool_input: { dataset_id: 'd' }, tool_use_id: 'toolu_hook_deny' };
    const [matcher] = swarm.hooks.PreToolUse!;
    const out = await matcher!.hooks[0]!(pre, 'toolu_hook_deny', { signal: signal() });
    expect(out).toMatchObject({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny' } });
    const allowedPre: PreToolUseHookInput = { ...pre, tool_name: 'monitor_drift', tool_input: { model_id: 'm-1' }, tool_use_id: 'toolu_hook_allow' };
    expect(await matcher!.hooks[0]!(allowedPre, 'toolu_hook_allow', { signal: signal() })).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
    const post: PostToolUseHookInput = { ...base, hook_event_name: 'PostToolUse', tool_name: 'monitor_drift', tool_input: { model_id: 'm-1' }, tool_response: { drift: 0.01 }, tool_use_id: 'toolu_hook_allow' } as PostToolUseHookInput;
    expect(await swarm.hooks.PostToolUse![0]!.hooks[0]!(post, 'toolu_hook_allow', { signal: signal() })).toEqual({});
  });
});

describe('LangChain createAgent on LangGraph', () => {
  /** The deployer's tools as LangChain tools, counting their runs. */
  function lcTools() {
    const ran: { tool: string; input: Record<string, unknown> }[] = [];
    const make = (name: string, schema: z.ZodObject, result: unknown) =>
      lcTool(
        async (input: Record<string, unknown>) => {
          ran.push({ tool: name, input });
          return JSON.stringify(result);
        },
        { name, description: name, schema },
      );
    return {
      ran,
      tools: [
        make('export_raw_data', z.object({ dataset_id: z.string() }), { rows: 1 }),
        make('monitor_drift', z.object({ model_id: z.string() }), { drift: 0.01 }),
        make('deploy_serving', z.object({ model_id: z.string(), env: z.string() }), { deployed: true }),
        make('send_email', z.object({ to: z.string(), subject: z.string(), bcc: z.string().optional() }), { sent: true }),
      ],
    };
  }
  /** An agent whose model makes these tool calls, then answers; what each model call was shown of the tools. */
  function lcAgent(calls: { name: string; args: Record<string, unknown>; id: string }[], options: Parameters<typeof swarmMiddleware>[1] = {}, swarm = client()) {
    const { tools, ran } = lcTools();
    const shown: string[][] = [];
    const spy = createMiddleware({
      name: 'ToolsShown',
      wrapModelCall: (request, handler) => {
        shown.push((request.tools ?? []).map((t) => (t as { name: string }).name).sort());
        return handler(request);
      },
    });
    const agent = createAgent({ model: new FakeToolCallingModel({ toolCalls: [calls, []] }), tools, middleware: [swarmMiddleware(swarm, options), spy], checkpointer: new MemorySaver() });
    return { agent, ran, shown };
  }
  const toolMessages = (messages: BaseMessage[]) => messages.filter((m) => ToolMessage.isInstance(m)) as ToolMessage[];

  it('DENY: the tool never runs, the model reads a refusal recorded with the tool call id; tools the agent can never use are not shown', async () => {
    const { agent, ran, shown } = lcAgent([{ name: 'export_raw_data', args: { dataset_id: 'customers' }, id: 'lc_deny' }]);
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Export the customers.' }] }, { configurable: { thread_id: 'lc-deny' } });
    expect(ran).toEqual([]);
    const [refused] = toolMessages(result.messages);
    expect(refused!.status).toBe('error');
    const content = JSON.parse(String(refused!.content)) as Refusal;
    expect(content).toMatchObject({ refused: true, decision: 'DENY', rule_source: 'agent_allowlist' });
    expect(denialRow(content.decision_id!)).toMatchObject({ tool_call_id: 'lc_deny', tool_name: 'export_raw_data' });
    expect(shown[0]).toEqual(['deploy_serving', 'monitor_drift', 'send_email']);
  });

  it('ASK, interrupt: the run stops with our approval; resumed, it runs once if the operator approved, and is refused if not', async () => {
    for (const operator of ['approve', 'reject'] as const) {
      const { agent, ran } = lcAgent([{ name: 'deploy_serving', args: { model_id: `m-lc-${operator}`, env: 'prod' }, id: `lc_${operator}` }], { onAsk: 'interrupt' });
      const thread = { configurable: { thread_id: `lc-${operator}` } };
      const first = await agent.invoke({ messages: [{ role: 'user', content: 'Deploy.' }] }, thread);
      const raised = (first as { __interrupt__?: { value: ApprovalInterrupt }[] }).__interrupt__?.[0]?.value;
      expect(raised).toMatchObject({ type: 'swarm_approval', tool: 'deploy_serving', rule_source: 'hitl:deploy' });
      expect(ran).toEqual([]);
      await decide(raised!.approval_id, operator);
      // Whatever the person at the chat answers, the server decides.
      const resumed = await agent.invoke(new Command({ resume: { approved: true } }), thread);
      if (operator === 'approve') {
        expect(ran).toEqual([{ tool: 'deploy_serving', input: { model_id: 'm-lc-approve', env: 'prod' } }]);
        expect(await approvalStatus(raised!.approval_id)).toBe('consumed');
      } else {
        expect(ran).toEqual([]);
        expect(JSON.parse(String(toolMessages(resumed.messages).at(-1)!.content))).toMatchObject({ refused: true, rule_source: 'hitl:deploy' });
      }
    }
  });

  it('ALLOW runs with the arguments the server\'s rewrite hook left; the server unreachable, nothing runs', async () => {
    const mail = lcAgent([{ name: 'send_email', args: { to: 'ops@swarm.example', subject: 'drift', bcc: 'rival@example.com' }, id: 'lc_mail' }]);
    await mail.agent.invoke({ messages: [{ role: 'user', content: 'Mail ops.' }] }, { configurable: { thread_id: 'lc-mail' } });
    expect(mail.ran).toEqual([{ tool: 'send_email', input: { to: 'ops@swarm.example', subject: 'drift' } }]);
    const down = lcAgent([{ name: 'monitor_drift', args: { model_id: 'm-1' }, id: 'lc_down' }], {}, unreachable());
    const result = await down.agent.invoke({ messages: [{ role: 'user', content: 'Check drift.' }] }, { configurable: { thread_id: 'lc-down' } });
    expect(down.ran).toEqual([]);
    expect(JSON.parse(String(toolMessages(result.messages)[0]!.content))).toMatchObject({ refused: true, rule_source: UNREACHABLE });
  });

  it('ASK, wait: held until an operator approves, then runs once', async () => {
    const { agent, ran } = lcAgent([{ name: 'deploy_serving', args: { model_id: 'm-lc-wait', env: 'prod' }, id: 'lc_wait' }], { waitMs: 60_000 });
    const run = agent.invoke({ messages: [{ role: 'user', content: 'Deploy.' }] }, { configurable: { thread_id: 'lc-wait' } });
    let id: string | undefined;
    await expect.poll(async () => (id = await pendingFor('m-lc-wait')), { timeout: 10_000 }).toBeTruthy();
    expect(ran).toEqual([]);
    await decide(id!, 'approve');
    await run;
    expect(ran).toEqual([{ tool: 'deploy_serving', input: { model_id: 'm-lc-wait', env: 'prod' } }]);
  });
});

describe('the OpenAI Agents SDK', () => {
  // (offline: the SDK's traces are not exported)
  beforeAll(() => setTracingDisabled(true));
  /** A Model of the SDK's interface that makes these function calls, then answers; the inputs it was sent. */
  function oaModel(calls: { callId: string; name: string; args: Record<string, unknown> }[]) {
    const inputs: unknown[] = [];
    let step = 0;
    const model: OaModel = {
      async getResponse(request) {
        inputs.push(request.input);
        const output =
          step++ === 0
            ? calls.map((c) => ({ type: 'function_call' as const, callId: c.callId, name: c.name, arguments: JSON.stringify(c.args), status: 'completed' as const }))
            : [{ type: 'message' as const, role: 'assistant' as const, status: 'completed' as const, content: [{ type: 'output_text' as const, text: 'done' }] }];
        return { usage: new Usage(), output };
      },
      getStreamedResponse() {
        throw new Error('this scripted model does not stream');
      },
    };
    return { model, inputs };
  }
  function oaTools() {
    const ran: { tool: string; input: Record<string, unknown> }[] = [];
    const make = (name: string, parameters: z.ZodObject, result: string) =>
      oaTool({
        name,
        description: name,
        parameters,
        execute: async (input) => {
          ran.push({ tool: name, input: input as Record<string, unknown> });
          return result;
        },
      });
    // A JSON-schema tool, not strict: the server's drop-bcc hook removes its optional bcc, which a strict schema would
    // require (as null), and the SDK would then refuse the rewritten call.
    const mail = oaTool({
      name: 'send_email',
      description: 'send_email',
      strict: false,
      parameters: { type: 'object' as const, properties: { to: { type: 'string' }, subject: { type: 'string' }, bcc: { type: 'string' } }, required: ['to', 'subject'], additionalProperties: true as const },
      execute: async (input) => {
        ran.push({ tool: 'send_email', input: (typeof input === 'string' ? JSON.parse(input) : input) as Record<string, unknown> });
        return 'sent';
      },
    });
    return {
      ran,
      tools: [make('export_raw_data', z.object({ dataset_id: z.string() }), 'rows: 1'), make('deploy_serving', z.object({ model_id: z.string(), env: z.string() }), 'deployed'), mail],
    };
  }
  /** The function call outputs the model was sent in its second call. */
  const outputsSent = (inputs: unknown[]) =>
    Object.fromEntries(((inputs[1] ?? []) as { type?: string; callId?: string; output?: { text?: string } | string }[]).filter((i) => i.type === 'function_call_result').map((i) => [i.callId, typeof i.output === 'string' ? i.output : i.output?.text]));

  it('DENY never runs and the model reads why; ALLOW runs with the rewritten arguments', async () => {
    const { tools, ran } = oaTools();
    const { model, inputs } = oaModel([
      { callId: 'oa_deny', name: 'export_raw_data', args: { dataset_id: 'customers' } },
      { callId: 'oa_mail', name: 'send_email', args: { to: 'ops@swarm.example', subject: 'drift', bcc: 'rival@example.com' } },
    ]);
    const agent = new OaAgent({ name: 'deployer', instructions: 'Deploy models.', model, tools: withSwarmOa(tools, client()) });
    const result = await oaRun(agent, 'Export the customers and mail ops.');
    expect(result.finalOutput).toBe('done');
    expect(ran).toEqual([{ tool: 'send_email', input: { to: 'ops@swarm.example', subject: 'drift' } }]);
    const refusal = JSON.parse(String(outputsSent(inputs).oa_deny)) as Refusal;
    expect(refusal).toMatchObject({ refused: true, decision: 'DENY', rule_source: 'agent_allowlist' });
    expect(denialRow(refusal.decision_id!)).toMatchObject({ tool_call_id: 'oa_deny', tool_name: 'export_raw_data' });
    // The tools the agent can never use, left out before the model sees them.
    expect((await usableOa(tools, client())).map((t) => (t as { name: string }).name)).toEqual(['deploy_serving', 'send_email']);
  });

  it('ASK, interrupt: the run ends with an interruption carrying our approval; approved by the person chatting, it runs only if the operator approved', async () => {
    for (const operator of ['approve', 'reject'] as const) {
      const { tools, ran } = oaTools();
      const guarded = withSwarmOa(tools, client(), { onAsk: 'interrupt' });
      const callId = `oa_${operator}`;
      const { model, inputs } = oaModel([{ callId, name: 'deploy_serving', args: { model_id: `m-oa-${operator}`, env: 'prod' } }]);
      const agent = new OaAgent({ name: 'deployer', instructions: 'Deploy models.', model, tools: guarded });
      const first = await oaRun(agent, 'Deploy.');
      expect(first.interruptions).toHaveLength(1);
      const ours = approvalForOa(guarded, callId)!;
      expect(ours.url).toBe(`${server.url}/approvals?request=${ours.approvalId}`);
      await decide(ours.approvalId, operator);
      first.state.approve(first.interruptions[0]!);
      await oaRun(agent, first.state);
      if (operator === 'approve') {
        expect(ran).toEqual([{ tool: 'deploy_serving', input: { model_id: 'm-oa-approve', env: 'prod' } }]);
        expect(await approvalStatus(ours.approvalId)).toBe('consumed');
      } else {
        expect(ran).toEqual([]);
        expect(JSON.parse(String(outputsSent(inputs)[callId]))).toMatchObject({ refused: true, rule_source: 'hitl:deploy' });
      }
    }
  });

  it('the server unreachable: nothing runs, the model reads why', async () => {
    const { tools, ran } = oaTools();
    const { model, inputs } = oaModel([{ callId: 'oa_down', name: 'deploy_serving', args: { model_id: 'm-1', env: 'staging' } }]);
    await oaRun(new OaAgent({ name: 'deployer', instructions: 'Deploy models.', model, tools: withSwarmOa(tools, unreachable()) }), 'Deploy.');
    expect(ran).toEqual([]);
    expect(JSON.parse(String(outputsSent(inputs).oa_down))).toMatchObject({ refused: true, rule_source: UNREACHABLE });
  });

  it('ASK, wait: held until an operator approves, then runs once', async () => {
    const { tools, ran } = oaTools();
    const { model } = oaModel([{ callId: 'oa_wait', name: 'deploy_serving', args: { model_id: 'm-oa-wait', env: 'prod' } }]);
    const agent = new OaAgent({ name: 'deployer', instructions: 'Deploy models.', model, tools: withSwarmOa(tools, client(), { waitMs: 60_000 }) });
    const run = oaRun(agent, 'Deploy.');
    let id: string | undefined;
    await expect.poll(async () => (id = await pendingFor('m-oa-wait')), { timeout: 10_000 }).toBeTruthy();
    expect(ran).toEqual([]);
    await decide(id!, 'approve');
    await run;
    expect(ran).toEqual([{ tool: 'deploy_serving', input: { model_id: 'm-oa-wait', env: 'prod' } }]);
  });
});

describe('Mastra', () => {
  /** A language model of the AI SDK's v2 interface (what Mastra 0.24 streams from) that makes these tool calls, then answers. */
  function mastraModel(calls: { id: string; tool: string; input: Record<string, unknown> }[]) {
    const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
    const stream = (parts: unknown[]) => new ReadableStream({ start: (c) => (parts.forEach((p) => c.enqueue(p)), c.close()) });
    let step = 0;
    return {
      specificationVersion: 'v2',
      provider: 'scripted',
      modelId: 'scripted',
      supportedUrls: {},
      doGenerate: async () => {
        throw new Error('this scripted model only streams');
      },
      doStream: async () => ({
        stream: stream(
          step++ === 0
            ? [{ type: 'stream-start', warnings: [] }, ...calls.map((c) => ({ type: 'tool-call', toolCallId: c.id, toolName: c.tool, input: JSON.stringify(c.input) })), { type: 'finish', finishReason: 'tool-calls', usage }]
            : [{ type: 'stream-start', warnings: [] }, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'done' }, { type: 'text-end', id: 't' }, { type: 'finish', finishReason: 'stop', usage }],
        ),
      }),
    };
  }
  function mastraAgent(calls: { id: string; tool: string; input: Record<string, unknown> }[], options: Parameters<typeof withSwarmMastra>[2] = {}, swarm = client()) {
    const ran: { tool: string; input: Record<string, unknown> }[] = [];
    const make = (id: string, inputSchema: z.ZodObject, result: unknown) =>
      createMastraTool({ id, description: id, inputSchema, execute: async ({ context }) => (ran.push({ tool: id, input: context as Record<string, unknown> }), result) });
    const tools = withSwarmMastra(
      {
        export_raw_data: make('export_raw_data', z.object({ dataset_id: z.string() }), { rows: 1 }),
        deploy_serving: make('deploy_serving', z.object({ model_id: z.string(), env: z.string() }), { deployed: true }),
        send_email: make('send_email', z.object({ to: z.string(), subject: z.string(), bcc: z.string().optional() }), { sent: true }),
      },
      swarm,
      options,
    );
    const mastra = new Mastra({ agents: { deployer: new MastraAgent({ name: 'deployer', instructions: 'Deploy models.', model: mastraModel(calls) as never, tools }) }, storage: new InMemoryStore(), logger: false });
    return { agent: mastra.getAgent('deployer'), ran };
  }
  /** The chunks of a Mastra stream, by type. */
  async function chunks(stream: { fullStream: AsyncIterable<{ type: string; payload?: unknown }> }) {
    const out: { type: string; payload: Record<string, unknown> }[] = [];
    for await (const c of stream.fullStream) out.push({ type: c.type, payload: (c.payload ?? {}) as Record<string, unknown> });
    return out;
  }

  it('DENY: the tool never runs and the model reads the refusal, recorded with the tool call id', async () => {
    const { agent, ran } = mastraAgent([{ id: 'ma_deny', tool: 'export_raw_data', input: { dataset_id: 'customers' } }]);
    const seen = await chunks(await agent.stream('Export the customers.'));
    expect(ran).toEqual([]);
    const result = seen.find((c) => c.type === 'tool-result')!.payload.result as Refusal;
    expect(result).toMatchObject({ refused: true, decision: 'DENY', rule_source: 'agent_allowlist' });
    expect(denialRow(result.decision_id!)).toMatchObject({ tool_call_id: 'ma_deny', tool_name: 'export_raw_data' });
  });

  it('ASK, interrupt: the run suspends with our approval; resumed, it runs once if the operator approved, and is refused if not', async () => {
    for (const operator of ['approve', 'reject'] as const) {
      const { agent, ran } = mastraAgent([{ id: `ma_${operator}`, tool: 'deploy_serving', input: { model_id: `m-ma-${operator}`, env: 'prod' } }], { onAsk: 'interrupt' });
      const first = await agent.stream('Deploy.');
      const seen = await chunks(first);
      const suspended = seen.find((c) => c.type === 'tool-call-suspended')?.payload.suspendPayload as ApprovalSuspension | undefined;
      expect(suspended).toMatchObject({ type: 'swarm_approval', tool: 'deploy_serving', rule_source: 'hitl:deploy' });
      expect(ran).toEqual([]);
      await decide(suspended!.approval_id, operator);
      const resumed = await chunks(await agent.resumeStream({ approved: true }, { runId: first.runId, toolCallId: `ma_${operator}` }));
      if (operator === 'approve') {
        expect(ran).toEqual([{ tool: 'deploy_serving', input: { model_id: 'm-ma-approve', env: 'prod' } }]);
        expect(await approvalStatus(suspended!.approval_id)).toBe('consumed');
      } else {
        expect(ran).toEqual([]);
        expect(resumed.find((c) => c.type === 'tool-result')!.payload.result).toMatchObject({ refused: true, rule_source: 'hitl:deploy' });
      }
    }
  });

  it('ALLOW runs with the arguments the server\'s rewrite hook left; the server unreachable, nothing runs', async () => {
    const mail = mastraAgent([{ id: 'ma_mail', tool: 'send_email', input: { to: 'ops@swarm.example', subject: 'drift', bcc: 'rival@example.com' } }]);
    await chunks(await mail.agent.stream('Mail ops.'));
    expect(mail.ran).toEqual([{ tool: 'send_email', input: { to: 'ops@swarm.example', subject: 'drift' } }]);
    const down = mastraAgent([{ id: 'ma_down', tool: 'deploy_serving', input: { model_id: 'm-1', env: 'staging' } }], {}, unreachable());
    const seen = await chunks(await down.agent.stream('Deploy.'));
    expect(down.ran).toEqual([]);
    expect(seen.find((c) => c.type === 'tool-result')!.payload.result).toMatchObject({ refused: true, rule_source: UNREACHABLE });
  });

  it('ASK, wait: held until an operator approves, then runs once', async () => {
    const { agent, ran } = mastraAgent([{ id: 'ma_wait', tool: 'deploy_serving', input: { model_id: 'm-ma-wait', env: 'prod' } }], { waitMs: 60_000 });
    const run = agent.stream('Deploy.').then(chunks);
    let id: string | undefined;
    await expect.poll(async () => (id = await pendingFor('m-ma-wait')), { timeout: 10_000 }).toBeTruthy();
    expect(ran).toEqual([]);
    await decide(id!, 'approve');
    await run;
    expect(ran).toEqual([{ tool: 'deploy_serving', input: { model_id: 'm-ma-wait', env: 'prod' } }]);
  });
});

describe('the server stopped in the middle of a run', () => {
  it('nothing runs: the model reads that the server could not be reached', async () => {
    const { tools, ran } = deployerTools();
    const model = scriptedModel([{ id: 'call_down', tool: 'monitor_drift', input: { model_id: 'm-1' } }], () => server.stop());
    try {
      await generateText({ model, tools: withSwarm(tools, client({ retries: 1 })), prompt: 'Check drift.', stopWhen: stepCountIs(2) });
      expect(ran).toEqual([]);
      expect(toolResultsSent(model).call_down).toMatchObject({ refused: true, decision: 'DENY', rule_source: UNREACHABLE });
    } finally {
      await server.start();
    }
  });
});
