/**
 * The client's protocol handling (packages/client/src/index.ts) against a server that answers as this test scripts it
 * (a real node:http server on loopback): what the permission server answers only under failure (a RETRY, a database
 * gone, a dropped connection, a refusal with issues) is provoked here on purpose. The answers to real decisions are
 * tested against the built server (e2e/client.spec.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSED, SwarmClient, UNREACHABLE, type CheckAnswer } from '../packages/client/src/index';

const ALLOW: CheckAnswer = { decision_id: 'd-1', decision: 'ALLOW', rule_source: 'agent_allowlist', reason: 'ok', approval_id: null, recorded: false, arguments_changed_by: [], arguments: null, hooks: [], trace: [] };

/** What the server does with the next requests, in order; the requests it saw. */
let script: ((req: IncomingMessage, res: ServerResponse) => void)[] = [];
let seen: { method: string; url: string; body: string; authorization: string | undefined }[] = [];
let server: Server;
let url = '';

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, body, authorization: req.headers.authorization });
      const next = script.shift() ?? json(500, { error: { code: 'INTERNAL', message: 'nothing scripted' } });
      next(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const given = (...steps: typeof script) => {
  script = steps;
  seen = [];
};
const client = (over: Partial<ConstructorParameters<typeof SwarmClient>[0]> = {}) => new SwarmClient({ url, token: 'swt_test', agent: 'deployer', ...over });
const call = { tool: 'monitor_drift', arguments: { model_id: 'm-1' }, toolCallId: 'call_1' };

describe('the client', () => {
  it('sends the call as the server reads it: the agent, the tool, the arguments, the framework\'s tool call id, the token', async () => {
    given(json(200, ALLOW));
    expect(await client().check(call)).toEqual(ALLOW);
    expect(seen).toEqual([{ method: 'POST', url: '/api/v1/permissions/check', authorization: 'Bearer swt_test', body: JSON.stringify({ agent: 'deployer', tool: 'monitor_drift', arguments: { model_id: 'm-1' }, tool_call_id: 'call_1' }) }]);
  });

  it('tries a RETRY answer again, with a wait between, and answers what the server then decided', async () => {
    given(json(503, { error: { code: 'RETRY', message: 'The hooks of this call changed while it was being decided. Try again.' } }, { 'retry-after': '1' }), json(503, { error: { code: 'RETRY', message: 'again' } }), json(200, ALLOW));
    const started = Date.now();
    expect(await client().check(call)).toEqual(ALLOW);
    expect(seen).toHaveLength(3);
    // Retry-After: 1 is honoured with jitter (half to all of it), and the second wait is a backoff of its own.
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
  });

  it('gives up after its retries and refuses the call, naming why; a 503 the server does not ask to retry is not retried', async () => {
    const retry = json(503, { error: { code: 'RETRY', message: 'Try again.' } }, { 'retry-after': '0' });
    given(retry, retry, retry);
    const exhausted = await client({ retries: 2 }).check(call);
    expect(seen).toHaveLength(3);
    expect(exhausted).toMatchObject({ decision: 'DENY', rule_source: UNREACHABLE, decision_id: null, recorded: false });
    expect(exhausted.reason).toBe('The permission server refused the request (503): Try again. monitor_drift was not run.');
    given(json(503, { error: { code: 'SERVICE_UNAVAILABLE', message: 'The request was refused because it could not be recorded in the audit trail.' } }));
    const unrecorded = await client().check(call);
    expect(seen).toHaveLength(1);
    expect(unrecorded).toMatchObject({ decision: 'DENY', rule_source: UNREACHABLE });
  });

  it('tries again after a connection dropped before an answer', async () => {
    given((req) => req.socket.destroy(), json(200, ALLOW));
    expect(await client().check(call)).toEqual(ALLOW);
    expect(seen).toHaveLength(2);
  });

  it('refuses what the server refused (4xx) with its issues, never retried; a call without an agent is not sent', async () => {
    given(json(400, { error: { code: 'BAD_REQUEST', message: 'The request body is not valid.', issues: [{ path: 'arguments.__proto__', message: 'a key named __proto__ cannot be kept' }] } }));
    const refused = await client().check(call);
    expect(seen).toHaveLength(1);
    expect(refused).toMatchObject({ decision: 'DENY', rule_source: REFUSED });
    expect(refused.reason).toBe('The permission server refused the request (400): The request body is not valid. (arguments.__proto__: a key named __proto__ cannot be kept) monitor_drift was not run.');
    given();
    const nobody = await client({ agent: undefined }).check({ tool: 'monitor_drift' });
    expect(seen).toHaveLength(0);
    expect(nobody).toMatchObject({ decision: 'DENY', rule_source: REFUSED, reason: expect.stringContaining('No agent named for monitor_drift') });
  });

  it('refuses an answer that is not JSON; a batch that cannot be decided refuses every call of it', async () => {
    given((_req, res) => res.end('<html>proxy error</html>'));
    expect(await client().check(call)).toMatchObject({ decision: 'DENY', rule_source: UNREACHABLE, reason: expect.stringContaining('without a JSON body') });
    given(json(502, { error: { code: 'BAD_GATEWAY', message: 'upstream down' } }));
    const batch = await client({ retries: 0 }).checkBatch([call, { tool: 'deploy_serving' }]);
    expect(batch.map((a) => [a.decision, a.rule_source])).toEqual([
      ['DENY', UNREACHABLE],
      ['DENY', UNREACHABLE],
    ]);
  });

  it('waits for an approval with the long poll, asking again when a wait ends undecided, and stops at its own deadline', async () => {
    const pending = { id: 'apr_12345678', status: 'pending' };
    given(json(200, pending), json(200, { ...pending, status: 'approved' }));
    expect(await client().waitForApproval('apr_12345678', { waitMs: 120_000 })).toMatchObject({ status: 'approved' });
    expect(seen.map((s) => s.url)).toEqual(['/api/v1/approvals/apr_12345678?wait=60', '/api/v1/approvals/apr_12345678?wait=60']);
    given(json(404, { error: { code: 'NOT_FOUND', message: 'There is no approval.' } }));
    expect(await client().waitForApproval('apr_12345678')).toBeUndefined();
    given(json(200, pending));
    expect(await client().waitForApproval('apr_12345678', { waitMs: 500 })).toMatchObject({ status: 'pending' });
    expect(seen.map((s) => s.url)).toEqual(['/api/v1/approvals/apr_12345678?wait=0']);
  });
});
