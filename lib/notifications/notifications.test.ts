/**
 * Notifications against a real receiver: a node:http server in the test that checks the HMAC signature and records
 * what arrives, and real applications on a real SQLite file (no mocks of the database or of HTTP).
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type SqliteApp } from '@/lib/app';
import { TEST_AGENTS, deployRequest } from '@/lib/test-support/temp-app';
import { ConfigFileError } from '@/lib/permissions/yaml-config';
import { parseNotifications } from './config';
import { startDemoReceiver, type ReceivedNotice } from './demo-receiver';
import { slackBody, type ApprovalNotice } from './messages';

const SECRET = 'test-hook-secret-0123456789';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  json: Record<string, unknown>;
  /** the signature header matches HMAC-SHA256(secret, `${timestamp}.${body}`) */
  signed: boolean;
}

type Answer = number | 'hang';

/** A webhook receiver: answers each request with the next planned status (200 when the plan is used up). */
async function receiver(plan: Answer[] = []): Promise<{ url: string; got: Received[]; hanging: ServerResponse[]; plan: Answer[]; close(): Promise<void> }> {
  const got: Received[] = [];
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const ts = String(req.headers['x-swarm-timestamp'] ?? '');
      const expected = `sha256=${createHmac('sha256', SECRET).update(`${ts}.${body}`).digest('hex')}`;
      got.push({ headers: req.headers, body, json: JSON.parse(body) as Record<string, unknown>, signed: req.headers['x-swarm-signature'] === expected });
      const answer = plan.shift() ?? 200;
      if (answer === 'hang') {
        hanging.push(res);
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer === 200 ? 'ok' : 'receiver broke');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    got,
    hanging,
    plan,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on. */
async function deadUrl(): Promise<string> {
  const r = await receiver();
  const url = r.url;
  await r.close();
  return url;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Setup {
  dir: string;
  dbPath: string;
  app: SqliteApp;
  /** another process on the same database and config (the decision listener beside the Next.js server) */
  second(): SqliteApp;
}

function setup(notifications: string, env: Record<string, string> = {}): Setup {
  const dir = mkdtempSync(join(tmpdir(), 'swarm-notify-'));
  writeFileSync(join(dir, 'agents.yaml'), TEST_AGENTS);
  writeFileSync(join(dir, 'permission_policies.yaml'), 'rules: []\n');
  writeFileSync(join(dir, 'notifications.yaml'), notifications);
  const dbPath = join(dir, 'test.db');
  const fullEnv = { SWARM_HOOK_SECRET: SECRET, SWARM_PUBLIC_URL: 'https://swarm.example.com/', ...env };
  const apps: SqliteApp[] = [];
  const make = () => {
    const a = createApp({ dbPath, configDir: dir, env: fullEnv });
    apps.push(a);
    return a;
  };
  const app = make();
  cleanups.push(() => {
    for (const a of apps) a.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, dbPath, app, second: make };
}

const webhook = (url: string, extra = '') => `
channels:
  - id: ops-hook
    kind: webhook
    url: ${url}
    secret_env: SWARM_HOOK_SECRET
${extra}`;

async function until(what: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const agent = (name: string) => ({ kind: 'agent' as const, id: name, role: 'viewer' as const, agent: name });

describe('signed webhook', () => {
  it('delivers approval_requested with a valid signature, a timestamp and the masked arguments', async () => {
    const r = await receiver();
    cleanups.push(r.close);
    const { app } = setup(webhook(r.url));
    const row = await app.approvals.request(deployRequest({ arguments: { model_id: 'm-42', env: 'prod', notify: 'ops@bank.example', api_key: 'sk-live-123' }, risk: 'high', gateDescription: 'Production deploys need a person.' }));
    // Queued in the request's transaction, sent only by the deliverer.
    expect(r.got).toHaveLength(0);
    expect((await app.notifications.list())[0]).toMatchObject({ status: 'pending', event: 'approval_requested', subject: row.id, channel: 'ops-hook' });
    expect(await app.notifications.deliverDue()).toBe(1);
    expect(r.got).toHaveLength(1);
    const [hit] = r.got;
    expect(hit!.signed).toBe(true);
    expect(hit!.headers['x-swarm-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(Math.abs(Number(hit!.headers['x-swarm-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
    expect(hit!.headers['x-swarm-delivery']).toBe(`approval_requested:${row.id}:ops-hook`);
    expect(hit!.headers['x-swarm-event']).toBe('approval_requested');
    expect(hit!.json).toMatchObject({
      id: `approval_requested:${row.id}:ops-hook`,
      event: 'approval_requested',
      source: 'swarm-permissions',
      approval: {
        id: row.id,
        gate: 'deploy',
        agent: 'deployer',
        tool: 'deploy_serving',
        arguments: { model_id: 'm-42', env: 'prod', notify: '[EMAIL ***@bank.example]', api_key: '[REDACTED]' },
        masked_paths: ['api_key', 'notify'],
        risk: 'high',
        gate_description: 'Production deploys need a person.',
        requested_by: 'agent:deployer',
        approvals_required: 1,
      },
      link: `https://swarm.example.com/approvals?request=${row.id}`,
    });
    expect((hit!.json.approval as { seconds_left: number }).seconds_left).toBeGreaterThan(3590);
    // The raw secret never reaches the receiver or the table.
    expect(hit!.body).not.toContain('sk-live-123');
    expect((await app.notifications.list())[0]).toMatchObject({ status: 'delivered', attempts: 1, lastStatus: 200, lastError: null });
    // A duplicate request of the same call is the same approval: nothing new is queued.
    await app.approvals.request(deployRequest({ arguments: { model_id: 'm-42', env: 'prod', notify: 'ops@bank.example', api_key: 'sk-live-123' } }));
    expect(await app.notifications.list()).toHaveLength(1);
  });

  it('a tampered body or a replayed old timestamp does not verify', async () => {
    const { signature } = await import('./service');
    const body = '{"event":"approval_requested"}';
    const sig = signature(SECRET, '1700000000', body);
    expect(sig).toBe(`sha256=${createHmac('sha256', SECRET).update(`1700000000.${body}`).digest('hex')}`);
    expect(signature(SECRET, '1700000001', body)).not.toBe(sig);
    expect(signature(SECRET, '1700000000', body.replace('requested', 'decided'))).not.toBe(sig);
  });
});

describe('Slack-compatible incoming webhook', () => {
  const notice: ApprovalNotice = {
    kind: 'approval',
    event: 'approval_requested',
    id: 'apr_example0001',
    gate: 'deploy',
    agent: 'deployer',
    tool: 'deploy_serving',
    arguments: { model_id: 'm-42', env: 'prod', notify: '[EMAIL ***@bank.example]' },
    maskedPaths: ['notify'],
    risk: 'high',
    gateDescription: 'Production deploys need a person.',
    requestedBy: 'agent:deployer',
    requestedAt: 1_790_000_000,
    expiresAt: 1_790_003_600,
    approvalsRequired: 2,
    link: 'https://swarm.example.com/approvals?request=apr_example0001',
  };

  it('builds Block Kit blocks with agent, tool, masked arguments, risk, time left and a link', () => {
    expect(slackBody(notice, 1_790_000_060)).toMatchInlineSnapshot(`
      {
        "blocks": [
          {
            "text": {
              "emoji": false,
              "text": "Approval needed: deploy_serving",
              "type": "plain_text",
            },
            "type": "header",
          },
          {
            "text": {
              "text": "Production deploys need a person.",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "fields": [
              {
                "text": "*Agent*
      deployer",
                "type": "mrkdwn",
              },
              {
                "text": "*Tool*
      \`deploy_serving\`",
                "type": "mrkdwn",
              },
              {
                "text": "*Risk*
      High",
                "type": "mrkdwn",
              },
              {
                "text": "*Time left*
      59 min (expires 2026-09-21T15:13:20Z)",
                "type": "mrkdwn",
              },
              {
                "text": "*Gate*
      \`deploy\` · 2 approvals needed",
                "type": "mrkdwn",
              },
              {
                "text": "*Requested by*
      agent:deployer",
                "type": "mrkdwn",
              },
            ],
            "type": "section",
          },
          {
            "text": {
              "text": "*Arguments* (masked: notify)
      \`\`\`{
        "model_id": "m-42",
        "env": "prod",
        "notify": "[EMAIL ***@bank.example]"
      }\`\`\`",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "elements": [
              {
                "action_id": "open_request",
                "style": "primary",
                "text": {
                  "text": "Open the request",
                  "type": "plain_text",
                },
                "type": "button",
                "url": "https://swarm.example.com/approvals?request=apr_example0001",
              },
            ],
            "type": "actions",
          },
          {
            "elements": [
              {
                "text": "Swarm Permissions · request \`apr_example0001\`",
                "type": "mrkdwn",
              },
            ],
            "type": "context",
          },
        ],
        "text": "Approval needed: deployer wants to run deploy_serving (risk high). Expires in 59 min.",
      }
    `);
  });

  it('posts the blocks to the URL named by url_env, unsigned', async () => {
    const r = await receiver();
    cleanups.push(r.close);
    const { app } = setup(
      `
channels:
  - id: ops-slack
    kind: slack
    url_env: SLACK_WEBHOOK_URL
`,
      { SLACK_WEBHOOK_URL: r.url },
    );
    const row = await app.approvals.request(deployRequest());
    await app.notifications.deliverDue();
    expect(r.got).toHaveLength(1);
    expect(r.got[0]!.headers['x-swarm-signature']).toBeUndefined();
    const blocks = r.got[0]!.json.blocks as { type: string }[];
    expect(blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'actions', 'context']);
    expect(r.got[0]!.body).toContain(`https://swarm.example.com/approvals?request=${row.id}`);
  });
});

describe('delivery', () => {
  it('retries a 500 with backoff, then succeeds', async () => {
    const r = await receiver([500, 503]);
    cleanups.push(r.close);
    const { app } = setup(webhook(r.url));
    await app.approvals.request(deployRequest());
    app.notifications.startDelivery({ intervalMs: 20, retryBaseSeconds: 0.05 });
    await until(async () => (await app.notifications.list())[0]?.status === 'delivered');
    expect(r.got).toHaveLength(3);
    expect(r.got.every((g) => g.signed)).toBe(true);
    // The same notification every time: one delivery id, one body.
    expect(new Set(r.got.map((g) => g.headers['x-swarm-delivery'])).size).toBe(1);
    expect((await app.notifications.list())[0]).toMatchObject({ status: 'delivered', attempts: 3, lastStatus: 200 });
  });

  it('marks a delivery failed after its attempts when the receiver is down, with the reason', async () => {
    const url = await deadUrl();
    const { app } = setup(webhook(url, '    max_attempts: 2\n'));
    await app.approvals.request(deployRequest());
    app.notifications.startDelivery({ intervalMs: 20, retryBaseSeconds: 0.05 });
    await until(async () => (await app.notifications.list())[0]?.status === 'failed');
    expect((await app.notifications.list())[0]).toMatchObject({ status: 'failed', attempts: 2, lastStatus: null, lastError: 'ECONNREFUSED' });
    expect(await app.notifications.counts()).toEqual({ pending: 0, sending: 0, delivered: 0, failed: 1 });
  });

  it('does not retry a 4xx that refuses the message', async () => {
    const r = await receiver([400]);
    cleanups.push(r.close);
    const { app } = setup(webhook(r.url));
    await app.approvals.request(deployRequest());
    await app.notifications.deliverDue();
    expect((await app.notifications.list())[0]).toMatchObject({ status: 'failed', attempts: 1, lastStatus: 400, lastError: 'HTTP 400: receiver broke' });
  });

  it('answers decisions while the receiver hangs', async () => {
    const r = await receiver(['hang', 'hang', 'hang']);
    cleanups.push(r.close);
    const { app } = setup(webhook(r.url, '    timeout: 30s\n'));
    app.notifications.startDelivery({ intervalMs: 10 });
    const first = app.engine.decide({ kind: 'tool', principal: agent('deployer'), agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-1', env: 'prod' } });
    expect(first.decision).toBe('ASK');
    await until(() => r.hanging.length === 1);
    expect((await app.notifications.list())[0]!.status).toBe('sending');
    // The receiver holds the request open; decisions go on, each answered at once, and their notifications queue up.
    for (let i = 0; i < 20; i++) {
      const d = app.engine.decide({ kind: 'tool', principal: agent('deployer'), agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: `m-${i + 2}`, env: 'prod' } });
      expect(d.decision).toBe('ASK');
    }
    const denied = app.engine.decide({ kind: 'tool', principal: agent('data_cleaner'), agent: 'data_cleaner', tool: 'deploy_serving', arguments: { model_id: 'x', env: 'prod' } });
    expect(denied.decision).toBe('DENY');
    const queued = await app.notifications.list({ limit: 500 });
    expect(queued).toHaveLength(21);
    // All of that happened while the first delivery was still open: it is still "sending", its request unanswered.
    expect(r.hanging[0]!.writableEnded).toBe(false);
    expect(queued.filter((n) => n.status === 'sending').length).toBeGreaterThanOrEqual(1);
    // The delivery loop goes on too: the receiver answers, and every queued notification is delivered.
    r.plan.length = 0;
    for (const res of r.hanging.splice(0)) res.writeHead(200).end();
    await until(async () => (await app.notifications.list({ limit: 500 })).every((n) => n.status === 'delivered'), 20_000);
  });

  it('two processes on one database never send the same notification twice', async () => {
    const r = await receiver();
    cleanups.push(r.close);
    const s = setup(webhook(r.url));
    const other = s.second();
    for (let i = 0; i < 15; i++) await s.app.approvals.request(deployRequest({ arguments: { model_id: `m-${i}`, env: 'prod' } }));
    for (let i = 15; i < 30; i++) await other.approvals.request(deployRequest({ arguments: { model_id: `m-${i}`, env: 'prod' } }));
    // Both deliver at once, several rounds.
    for (let round = 0; round < 3; round++) await Promise.all([s.app.notifications.deliverDue(), other.notifications.deliverDue()]);
    const ids = r.got.map((g) => String(g.headers['x-swarm-delivery']));
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
    expect((await s.app.notifications.counts()).delivered).toBe(30);
    expect(new Set((await s.app.notifications.list()).map((d) => d.origin))).toEqual(new Set(['app']));
  });
});

describe('events', () => {
  it('tells each channel once when a request nears its expiry, whichever process notices', async () => {
    const r = await receiver();
    cleanups.push(r.close);
    const s = setup(webhook(r.url, 'expiring: { before: 15m }\n'));
    const other = s.second();
    const row = await s.app.approvals.request(deployRequest({ expiresInSeconds: 3600 }));
    // A request that lives shorter than the window is announced only when requested.
    const short = await s.app.approvals.request(deployRequest({ arguments: { model_id: 'short', env: 'prod' }, expiresInSeconds: 600 }));
    await s.app.notifications.tick(row.requestedAt + 60);
    expect(await s.app.notifications.list({ event: 'approval_expiring' })).toHaveLength(0);
    const near = row.expiresAt - 14 * 60;
    await s.app.notifications.tick(near);
    await s.app.notifications.tick(near + 1);
    await other.notifications.tick(near + 2);
    await other.notifications.tick(near + 60);
    const expiring = (await s.app.notifications.list({ event: 'approval_expiring' }));
    expect(expiring.map((d) => d.subject)).toEqual([row.id]);
    await s.app.notifications.deliverDue();
    const hit = r.got.find((g) => g.json.event === 'approval_expiring')!;
    expect(hit.signed).toBe(true);
    expect(hit.json.approval).toMatchObject({ id: row.id, seconds_left: 14 * 60 });
    expect(short.id).not.toBe(row.id);
  });

  it('tells a denial burst once per window', async () => {
    const r = await receiver();
    cleanups.push(r.close);
    const s = setup(webhook(r.url, 'bursts:\n  - { id: shadow-burst, denials: 5, within: 60s, agent: shadow_agent }\n'));
    const other = s.second();
    const now = Date.now() / 1000;
    const deny = (agentName: string, at: number) =>
      s.app.recorder.appendDenial({ toolName: 'deploy_serving', agentName, argumentsJson: '{}', ruleSource: 'agent_allowlist', reason: 'unknown agent', userRole: 'viewer', principal: agentName, traceJson: null, timestamp: at });
    for (let i = 0; i < 4; i++) deny('shadow_agent', now - 10 + i);
    for (let i = 0; i < 10; i++) deny('data_cleaner', now - 10 + i);
    await s.app.notifications.tick(now);
    expect(await s.app.notifications.list({ event: 'denial_burst' })).toHaveLength(0);
    deny('shadow_agent', now - 1);
    await s.app.notifications.tick(now);
    await s.app.notifications.tick(now + 1);
    await other.notifications.tick(now + 2);
    for (let i = 0; i < 10; i++) deny('shadow_agent', now + 3);
    await s.app.notifications.tick(now + 30);
    await other.notifications.tick(now + 59);
    expect(await s.app.notifications.list({ event: 'denial_burst' })).toHaveLength(1);
    // The next window: a new burst is told again.
    for (let i = 0; i < 5; i++) deny('shadow_agent', now + 62);
    await s.app.notifications.tick(now + 63);
    await other.notifications.tick(now + 64);
    expect(await s.app.notifications.list({ event: 'denial_burst' })).toHaveLength(2);
    await s.app.notifications.deliverDue();
    const first = r.got.map((g) => g.json).find((j) => (j.burst as { denials: number }).denials === 5)!;
    expect(first).toMatchObject({ event: 'denial_burst', burst: { id: 'shadow-burst', threshold: 5, within_seconds: 60, agent: 'shadow_agent' } });
    expect(String(first.link)).toMatch(/^https:\/\/swarm\.example\.com\/denials\?from=\d+&to=\d+&agent=shadow_agent$/);
  });
});

describe('config/notifications.yaml', () => {
  it('refuses a malformed file with file:line:column, and keeps the last good version on reload', async () => {
    expect(() => parseNotifications('channels:\n  - id: ops\n    kind: pager\n', 'config/notifications.yaml')).toThrow(/^config\/notifications\.yaml:3:11: channels\.0\.kind: kind is webhook or slack$/);
    expect(() =>
      parseNotifications('channels:\n  - id: ops\n    kind: webhook\n    url: https://h.example\n    secret_env: S\n    retries: 3\n', 'config/notifications.yaml', { S: 'x' }),
    ).toThrow(/^config\/notifications\.yaml:6:5: channels\.0: Unrecognized key: "retries"/);
    expect(() => parseNotifications('channels: [\n', 'n.yaml')).toThrow(ConfigFileError);
    expect(() => parseNotifications('bursts:\n  - { id: b, denials: 5, within: soon }\n', 'n.yaml')).toThrow(/^n\.yaml:2:34: bursts\.0\.within: "soon" is not a duration/);
    expect(() => parseNotifications('bursts:\n  - { id: b, denials: 5, within: 1m, channels: [nope] }\n', 'n.yaml')).toThrow(/^n\.yaml:2:49: bursts\.0\.channels\.0: no channel "nope" is declared/);

    const r = await receiver();
    cleanups.push(r.close);
    const s = setup(webhook(r.url));
    const file = join(s.dir, 'notifications.yaml');
    writeFileSync(file, 'channels:\n  - id: ops-hook\n    kind: webhook\n    secret_env: lower_case\n');
    expect(s.app.notificationsFile.reload(true)).toBe(false);
    expect(s.app.notificationsFile.status().error).toMatch(/notifications\.yaml:4:17: channels\.0\.secret_env: the name of an environment variable/);
    expect(s.app.notificationsFile.current.channels.map((c) => c.id)).toEqual(['ops-hook']);
    // A good version takes effect on the next reload.
    writeFileSync(file, webhook(r.url).replace('ops-hook', 'ops-hook-2'));
    expect(s.app.notificationsFile.reload(true)).toBe(true);
    expect(s.app.notificationsFile.current.channels.map((c) => c.id)).toEqual(['ops-hook-2']);
  });

  it('an optional channel whose variables are not set is off and said so; set, it is in force; set but malformed, refused', () => {
    const text = `channels:
  - id: demo-receiver
    kind: webhook
    url_env: DEMO_URL
    secret_env: DEMO_SECRET
    optional: true
  - id: chat
    kind: slack
    url_env: CHAT_URL
    optional: true
`;
    const off = parseNotifications(text, 'n.yaml', {});
    expect(off.channels).toEqual([]);
    expect(off.off).toEqual([
      { id: 'demo-receiver', kind: 'webhook', reason: '$DEMO_URL and $DEMO_SECRET are not set' },
      { id: 'chat', kind: 'slack', reason: '$CHAT_URL is not set' },
    ]);
    // Half-set is off too (nothing can be signed), naming only what is missing.
    expect(parseNotifications(text, 'n.yaml', { DEMO_URL: 'http://127.0.0.1:9/x' }).off[0]!.reason).toBe('$DEMO_SECRET is not set');
    const on = parseNotifications(text, 'n.yaml', { DEMO_URL: 'http://127.0.0.1:9/x', DEMO_SECRET: 's', CHAT_URL: 'https://chat.example/hook' });
    expect(on.channels.map((c) => c.id)).toEqual(['demo-receiver', 'chat']);
    expect(on.off).toEqual([]);
    // optional forgives a missing variable, never a wrong one.
    expect(() => parseNotifications(text, 'n.yaml', { DEMO_URL: 'ftp://x', DEMO_SECRET: 's' })).toThrow(/n\.yaml:4:14: .*DEMO_URL does not hold an http\(s\) URL/);
  });

  it("the demo's receiver verifies what the server signs and refuses what it cannot verify", async () => {
    const got: ReceivedNotice[] = [];
    const demo = await startDemoReceiver((n) => got.push(n));
    cleanups.push(demo.close);
    const text = `channels:\n  - id: demo-receiver\n    kind: webhook\n    url_env: DEMO_URL\n    secret_env: DEMO_SECRET\n    optional: true\n`;
    const { app } = setup(text, { DEMO_URL: demo.url, DEMO_SECRET: demo.secret });
    const row = await app.approvals.request(deployRequest({ arguments: { model_id: 'm-7', env: 'prod' } }));
    expect(await app.notifications.deliverDue()).toBe(1);
    expect(got).toEqual([{ event: 'approval_requested', verified: true, summary: `deployer → deploy_serving (gate deploy) https://swarm.example.com/approvals?request=${row.id}` }]);
    expect((await app.notifications.list())[0]).toMatchObject({ status: 'delivered', channel: 'demo-receiver' });
    // Signed with another key: refused (401), and the sender records the refusal.
    const forged = await fetch(demo.url, { method: 'POST', headers: { 'x-swarm-timestamp': String(Math.floor(Date.now() / 1000)), 'x-swarm-signature': 'sha256=00' }, body: '{"event":"approval_requested"}' });
    expect(forged.status).toBe(401);
    expect(got[1]).toMatchObject({ verified: false });
  });

  it('refuses a channel whose environment variable is missing, at load, with file:line:column', () => {
    const text = `channels:
  - id: ops-hook
    kind: webhook
    url: https://hooks.example/approvals
    secret_env: SWARM_HOOK_SECRET
  - id: ops-slack
    kind: slack
    url_env: SLACK_WEBHOOK_URL
`;
    let error: unknown;
    try {
      parseNotifications(text, 'config/notifications.yaml', {});
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigFileError);
    expect((error as Error).message).toBe(
      [
        'config/notifications.yaml:5:17: channels.0.secret_env: the environment variable SWARM_HOOK_SECRET is not set: channel "ops-hook" cannot sign its messages',
        'config/notifications.yaml:8:14: channels.1.url_env: the environment variable SLACK_WEBHOOK_URL is not set: channel "ops-slack" has no URL',
      ].join('\n'),
    );
    expect(() => parseNotifications(text, 'n.yaml', { SWARM_HOOK_SECRET: 's', SLACK_WEBHOOK_URL: 'not a url' })).toThrow(/n\.yaml:8:14: .*SLACK_WEBHOOK_URL does not hold an http\(s\) URL/);
    // The secrets come from the environment only; the file never holds them.
    const ok = parseNotifications(text, 'n.yaml', { SWARM_HOOK_SECRET: 's3cret', SLACK_WEBHOOK_URL: 'https://hooks.slack.example/T/B/x' });
    expect(ok.channels.map((c) => [c.id, c.urlShown])).toEqual([
      ['ops-hook', 'https://hooks.example/approvals'],
      ['ops-slack', '$SLACK_WEBHOOK_URL'],
    ]);
    // A server does not start on it.
    const dir = mkdtempSync(join(tmpdir(), 'swarm-notify-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'notifications.yaml'), text);
    expect(() => createApp({ dbPath: join(dir, 'x.db'), configDir: dir, env: { SWARM_HOOK_SECRET: 's' }, sweepApprovals: true })).toThrow(
      /notifications\.yaml:8:14: channels\.1\.url_env/,
    );
    // A process that only queues (a CLI command, the decision listener) starts without the secrets, keeps the channels
    // to queue for, and never sends.
    const lenient = parseNotifications(text, 'n.yaml', {}, { secrets: 'optional' });
    expect(lenient.channels.map((c) => [c.id, c.url, c.secret ?? null])).toEqual([
      ['ops-hook', 'https://hooks.example/approvals', null],
      ['ops-slack', '', null],
    ]);
    const cli = createApp({ dbPath: join(dir, 'y.db'), configDir: dir, env: {} });
    expect(cli.notificationsFile.current.channels).toHaveLength(2);
    cli.close();
  });
});
