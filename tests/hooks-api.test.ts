/**
 * Hooks through the API, in one process: the real route handlers, the decision listener over real sockets, a copy of
 * config/ with hooks.yaml (the shipped drop-bcc rewrite, and a webhook that reviews run_batch) and a real webhook
 * receiver that checks the signature.
 */
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callRoute, useTempServerEnv } from './support/in-process-api';

const SECRET = 'hooks-api-secret-0123456789';
const server = useTempServerEnv('hooks', { policy: 'empty', env: { SWARM_HOOK_SECRET: SECRET } });

const listen = (s: Server) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));

/** The webhook: blocks a batch on the "prod" queue, lets others through; records what it heard, signature checked. */
const heard: { event: string; json: Record<string, unknown>; signed: boolean }[] = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    const signed = req.headers['x-swarm-signature'] === `sha256=${createHmac('sha256', SECRET).update(`${String(req.headers['x-swarm-timestamp'])}.${body}`).digest('hex')}`;
    const json = JSON.parse(body) as { event: string; call: { arguments: { queue?: string } } };
    heard.push({ event: json.event, json, signed });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(json.event === 'before_tool_call' && json.call.arguments.queue === 'prod' ? JSON.stringify({ decision: 'block', reason: 'No batches on prod today.' }) : '');
  });
});
const hookUrl = `http://127.0.0.1:${await listen(receiver)}/hook`;
const hooksFile = join(server.dir, 'config', 'hooks.yaml');
const shipped = (await import('node:fs')).readFileSync(hooksFile, 'utf8');
const withWebhook = `${shipped}
  - id: batch-review
    event: before_tool_call
    match: { tool: run_batch }
    webhook: { url: "${hookUrl}", secret_env: SWARM_HOOK_SECRET, timeout: 2s, retries: 0 }
  - id: batch-ran
    event: after_tool_call
    match: { tool: run_batch }
    webhook: { url: "${hookUrl}", secret_env: SWARM_HOOK_SECRET, retries: 0 }
`;
writeFileSync(hooksFile, withWebhook);

const { getSqliteApp } = await import('@/lib/app');
const { processMetrics } = await import('@/lib/ops/metrics');
const { createFrontServer } = await import('@/lib/server/front');
const check = await import('@/app/api/v1/permissions/check/route');
const batch = await import('@/app/api/v1/permissions/check/batch/route');
const evaluation = await import('@/app/access/v1/evaluation/route');
const finished = await import('@/app/api/v1/permissions/finished/route');
const transparency = await import('@/app/api/v1/transparency/route');

let deployer = '';
let trainer = '';
let front: Server;
let upstream: Server;
let base = '';
const proxied: string[] = [];

beforeAll(async () => {
  deployer = await getSqliteApp().auth.createToken({ agent: 'deployer' }, 'd');
  trainer = await getSqliteApp().auth.createToken({ agent: 'trainer' }, 't');
  upstream = createServer((req, res) => {
    proxied.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => res.writeHead(209, { 'content-type': 'text/plain' }).end('upstream'));
  });
  front = createFrontServer({ app: getSqliteApp(), upstream: { host: '127.0.0.1', port: await listen(upstream) } });
  base = `http://127.0.0.1:${await listen(front)}`;
});
afterAll(async () => {
  await new Promise((r) => front.close(r));
  front.closeAllConnections();
  await new Promise((r) => upstream.close(r));
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
  await getSqliteApp().close();
  server.remove();
});

interface Answer {
  decision: string;
  rule_source: string;
  reason: string;
  decision_id: string;
  arguments: Record<string, unknown> | null;
  arguments_changed_by: string[];
  hooks: { hook: string; outcome: string; changed: string[] }[];
  trace: { decision: string; rule_source: string; reason: string }[];
}

const post = async (handler: typeof check.POST, url: string, token: string, body: unknown) => {
  const r = await callRoute(handler, url, { method: 'POST', token, body: JSON.stringify(body) });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
};

describe('the check API with hooks', () => {
  it('answers the rewritten arguments, which hook changed them, and each hook in the trace', async () => {
    const { status, json } = await post(check.POST, '/api/v1/permissions/check', deployer, {
      agent: 'deployer',
      tool: 'send_email',
      arguments: { to: 'team@swarm.example', subject: 'Release', bcc: 'someone@elsewhere.example' },
    });
    expect(status).toBe(200);
    const a = json as unknown as Answer;
    expect(a).toMatchObject({ decision: 'ALLOW', arguments_changed_by: ['drop-bcc'], arguments: { to: 'team@swarm.example', subject: 'Release' } });
    expect(a.arguments).not.toHaveProperty('bcc');
    expect(a.hooks).toEqual([expect.objectContaining({ hook: 'drop-bcc', outcome: 'rewrote', changed: ['bcc'] })]);
    expect(a.trace.at(-1)).toMatchObject({ decision: 'ALLOW', rule_source: 'hook:drop-bcc', reason: 'rewrite hook rewrote the arguments (bcc)' });
    // Nothing to rewrite: the arguments stay the agent's, and the answer says so.
    const plain = (await post(check.POST, '/api/v1/permissions/check', deployer, { agent: 'deployer', tool: 'send_email', arguments: { to: 'team@swarm.example', subject: 'x' } })).json as unknown as Answer;
    expect(plain).toMatchObject({ decision: 'ALLOW', arguments_changed_by: [], arguments: null });
    // /metrics counts each hook's outcomes
    const text = await processMetrics().registry.metrics();
    expect(text).toMatch(/^swarm_hook_runs_total\{hook="drop-bcc",event="before_tool_call",outcome="rewrote"\} 1$/m);
    expect(text).toMatch(/^swarm_hook_runs_total\{hook="drop-bcc",event="before_tool_call",outcome="passed"\} 1$/m);
  });

  it('tells an AuthZEN enforcement point the rewritten arguments it must run the call with', async () => {
    const r = (await post(evaluation.POST, '/access/v1/evaluation', deployer, {
      subject: { type: 'agent', id: 'deployer' },
      action: { name: 'call' },
      resource: { type: 'tool', id: 'send_email', properties: { arguments: { to: 'a@swarm.example', subject: 's', bcc: 'spy@x.example' } } },
    })).json as { decision: boolean; context: { arguments_changed_by?: string[]; arguments?: Record<string, unknown> } };
    expect(r).toMatchObject({ decision: true, context: { arguments_changed_by: ['drop-bcc'], arguments: { to: 'a@swarm.example', subject: 's' } } });
    expect(r.context.arguments).not.toHaveProperty('bcc');
  });

  it('waits for a webhook hook on the route, the batch and AuthZEN alike; a block is a recorded denial of the hook', async () => {
    const one = (await post(check.POST, '/api/v1/permissions/check', trainer, { agent: 'trainer', tool: 'run_batch', arguments: { queue: 'prod' } })).json as unknown as Answer;
    expect(one).toMatchObject({ decision: 'DENY', rule_source: 'hook:batch-review', reason: 'No batches on prod today.' });
    expect(await getSqliteApp().denials.get(await getSqliteApp().denials.newestId())).toMatchObject({ ruleSource: 'hook:batch-review', decisionId: one.decision_id });

    const many = (await post(batch.POST, '/api/v1/permissions/check/batch', trainer, {
      checks: [
        { agent: 'trainer', tool: 'run_batch', arguments: { queue: 'dev' } },
        { agent: 'trainer', tool: 'run_batch', arguments: { queue: 'prod' } },
      ],
    })).json as { results: Answer[] };
    expect(many.results.map((r) => [r.decision, r.rule_source])).toEqual([
      ['ALLOW', expect.any(String)],
      ['DENY', 'hook:batch-review'],
    ]);

    const authzen = (await post(evaluation.POST, '/access/v1/evaluation', trainer, {
      subject: { type: 'agent', id: 'trainer' },
      action: { name: 'call' },
      resource: { type: 'tool', id: 'run_batch', properties: { arguments: { queue: 'prod' } } },
    })).json as { decision: boolean; context: { rule_source: string } };
    expect(authzen).toMatchObject({ decision: false, context: { rule_source: 'hook:batch-review' } });
    const before = heard.filter((h) => h.event === 'before_tool_call');
    expect(before.length).toBe(4);
    expect(before.every((h) => h.signed)).toBe(true);
  });

  it('reports a finished call to the after_tool_call hooks (202); an agent token reports only its own calls', async () => {
    const r = await post(finished.POST, '/api/v1/permissions/finished', trainer, { agent: 'trainer', tool: 'run_batch', arguments: { queue: 'dev' }, outcome: 'succeeded', result: { rows: 12 } });
    expect(r.status).toBe(202);
    await getSqliteApp().hooks.drain();
    expect(heard.at(-1)).toMatchObject({ event: 'after_tool_call', signed: true, json: { hook: 'batch-ran', outcome: 'succeeded', result: { rows: 12 } } });
    const other = await post(finished.POST, '/api/v1/permissions/finished', trainer, { agent: 'deployer', tool: 'run_batch', outcome: 'failed' });
    expect(other.status).toBe(403);
    const bad = await post(finished.POST, '/api/v1/permissions/finished', trainer, { agent: 'trainer', tool: 'run_batch', outcome: 'maybe' });
    expect(bad.status).toBe(400);
  });

  it('lists the hooks on the transparency report, with what each does', async () => {
    const admin = server.adminToken;
    const r = await callRoute(transparency.GET, '/api/v1/transparency', { token: admin });
    const report = (await r.json()) as { hooks: { file: { error: string | null }; hooks: { id: string; event: string; does: string; conditions: string[] }[] } };
    expect(report.hooks.file.error).toBeNull();
    expect(report.hooks.hooks.map((h) => [h.id, h.event])).toEqual([
      ['drop-bcc', 'before_tool_call'],
      ['batch-review', 'before_tool_call'],
      ['batch-ran', 'after_tool_call'],
    ]);
    expect(report.hooks.hooks[0]!.does).toBe('Rewrites the arguments: removes bcc, cc_hidden');
    expect(report.hooks.hooks[1]!.does).toMatch(/^Asks http:\/\/127\.0\.0\.1:\d+\/hook \(signed with \$SWARM_HOOK_SECRET; 2s timeout, 0 retries\)$/);
  });
});

describe('the decision listener with hooks', () => {
  const viaListener = (tool: string, args: Record<string, unknown>) =>
    fetch(`${base}/api/v1/permissions/check`, {
      method: 'POST',
      headers: { authorization: `Bearer ${trainer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'trainer', tool, arguments: args }),
    });

  it('leaves calls to Next.js while a before_tool_call webhook is configured, and answers them itself again once it is gone', async () => {
    const r = await viaListener('train_model', {});
    expect(r.status).toBe(209);
    expect(proxied.at(-1)).toBe('POST /api/v1/permissions/check');

    writeFileSync(hooksFile, shipped);
    getSqliteApp().hooksFile.reload();
    const direct = await viaListener('train_model', {});
    expect(direct.status).toBe(200);
    expect(((await direct.json()) as Answer).decision).toBe('ALLOW');
    writeFileSync(hooksFile, withWebhook);
    getSqliteApp().hooksFile.reload();
  });
});
