/**
 * The notification contract: one service and one store (store.ts) on SQLite (two connections to one file) and on
 * PostgreSQL (two connection pools to the test run's throwaway cluster), each pair standing for two servers on one
 * database, with a real local HTTP receiver that checks every signature. No mocks: real approvals, real denials, real
 * deliveries; and two deliverers in processes of their own racing for the same rows.
 */
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import { PostgresDatabase, SqliteDatabase, type SqlDatabase } from '@/db/dialect';
import { inTransaction } from '@/db/pg/client';
import type { ApprovalRow, NotificationDeliveryRow } from '@/db/schema';
import { SqlApprovalStore, type ApprovalListener, type ApprovalRequest } from '@/lib/approvals/store';
import { PgAuditRecorder } from '@/lib/audit/trail/pg-recorder';
import { AuditRecorder, type DenialInput } from '@/lib/audit/trail/recorder';
import { deployRequest, testBinding } from '@/lib/test-support/temp-app';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { within } from '@/lib/test-support/wait';
import { parseNotifications, type NotificationConfig } from './config';
import { clock, deliveriesOf, type QueuedDelivery } from './core';
import { NotificationService } from './service';
import { queueIn, SqlNotificationStore } from './store';

const SECRET = 'contract-hook-secret-0123456789';
const env = { SWARM_HOOK_SECRET: SECRET, SWARM_PUBLIC_URL: 'https://swarm.example.com' };

/** One server: its notifications, and the approvals and denials that make them. */
interface Server {
  notifications: NotificationService;
  database: SqlDatabase;
  request(r: ApprovalRequest): Promise<ApprovalRow>;
  deny(agent: string, at: number): Promise<void>;
  /** a statement on the database, as an operator would run it */
  exec(sql: string): Promise<void>;
}

interface TwoServers {
  a: Server;
  b: Server;
  /** the notifications file both servers read */
  use(yaml: string): void;
  /** where a process of its own finds the database: the SQLite file or the PostgreSQL URL */
  location: string;
}

/** Set by a test: the approval store's listener fails after it queued the request's notification. */
let failAfterQueueing = false;
const listenerFailure = () => {
  if (failAfterQueueing) throw new Error('the listener failed after queueing');
};

/** The approval store's listener as the applications wire it (lib/server/app.ts): queued inside the transition's transaction. */
const queueing = (notifications: NotificationService): ApprovalListener => ({
  *inTransaction(e, tx) {
    yield* queueIn(tx, notifications.deliveriesFor(e));
    listenerFailure();
  },
  afterCommit: () => undefined,
});

const pg15 = usePostgres();
const cleanups: (() => unknown)[] = [];
afterAll(() => {
  for (const c of cleanups.splice(0)) c();
});
const perTest: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of perTest.splice(0).reverse()) await c();
});

const denial = (agent: string, at: number): DenialInput => ({
  toolName: 'deploy_serving',
  agentName: agent,
  argumentsJson: '{}',
  ruleSource: 'agent_allowlist',
  reason: 'unknown agent',
  userRole: 'viewer',
  principal: agent,
  traceJson: null,
  timestamp: at,
});

function configHolder(): { get: () => NotificationConfig; use(yaml: string): void } {
  let config = parseNotifications('', 'notifications.yaml', env);
  return { get: () => config, use: (yaml) => (config = parseNotifications(yaml, 'notifications.yaml', env)) };
}

const databases: Record<'SQLite' | 'PostgreSQL', () => Promise<TwoServers>> = {
  async SQLite() {
    const dir = mkdtempSync(join(tmpdir(), 'swarm-notify-contract-'));
    const config = configHolder();
    const server = (name: string): Server => {
      const db = openDatabase({ path: join(dir, 'n.db') });
      cleanups.push(() => db.$client.close());
      const database = new SqliteDatabase(db.$client);
      const notifications = new NotificationService({ store: new SqlNotificationStore(database), config: config.get, env, origin: name });
      const approvals = new SqlApprovalStore(database, queueing(notifications), testBinding);
      const recorder = new AuditRecorder(db.$client, { revision: () => null, logAllDecisions: () => false });
      return {
        notifications,
        database,
        request: async (r) => approvals.request(r),
        deny: async (agent, at) => void recorder.appendDenial(denial(agent, at)),
        exec: async (sql) => void db.$client.exec(sql),
      };
    };
    const two = { a: server('server-a'), b: server('server-b'), use: config.use, location: join(dir, 'n.db') };
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return two;
  },
  async PostgreSQL() {
    const name = await pg15.freshDatabase('notify');
    const config = configHolder();
    const server = (origin: string): Server => {
      const pool = pg15.pool(name, 4);
      const database = new PostgresDatabase(pool);
      const notifications = new NotificationService({ store: new SqlNotificationStore(database), config: config.get, env, origin });
      const approvals = new SqlApprovalStore(database, queueing(notifications), testBinding);
      const recorder = new PgAuditRecorder(pool, { revision: () => null, logAllDecisions: () => false });
      return {
        notifications,
        database,
        request: (r) => approvals.request(r),
        deny: (agent, at) => inTransaction(pool, async (tx) => void (await recorder.appendDenialIn(tx, denial(agent, at)))),
        exec: async (sql) => void (await pool.query(sql)),
      };
    };
    return { a: server('server-a'), b: server('server-b'), use: config.use, location: pg15.cluster.urlOf(name) };
  },
};

interface Received {
  headers: IncomingMessage['headers'];
  json: Record<string, unknown>;
  /** the signature header matches HMAC-SHA256(secret, `${timestamp}.${body}`) */
  signed: boolean;
}

/**
 * A webhook receiver: answers each request with the next planned status (200 when the plan is used up); a planned
 * promise holds the answer until it resolves.
 */
async function receiver(plan: (number | Promise<number>)[] = []): Promise<{ url: string; got: Received[] }> {
  const got: Received[] = [];
  const server: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const ts = String(req.headers['x-swarm-timestamp'] ?? '');
      const expected = `sha256=${createHmac('sha256', SECRET).update(`${ts}.${body}`).digest('hex')}`;
      got.push({ headers: req.headers, json: JSON.parse(body) as Record<string, unknown>, signed: req.headers['x-swarm-signature'] === expected });
      void Promise.resolve(plan.shift() ?? 200).then((status) =>
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'receiver broke'),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  perTest.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

const webhook = (url: string, extra = '') => `
channels:
  - id: ops-hook
    kind: webhook
    url: ${url}
    secret_env: SWARM_HOOK_SECRET
${extra}`;

const now = () => Date.now() / 1000;
const ids = (rows: readonly { id: number }[]) => rows.map((r) => r.id);

describe.each(Object.keys(databases) as (keyof typeof databases)[])('notifications on %s, two servers', (kind) => {
  let s: TwoServers;
  const fresh = async () => {
    s = await databases[kind]();
    return s;
  };

  it('queues a request in its transaction, once per channel, however many times it is asked for', async () => {
    const r = await receiver();
    await fresh();
    s.use(`${webhook(r.url)}
  - id: ops-slack
    kind: webhook
    url: ${r.url}
    secret_env: SWARM_HOOK_SECRET
    events: [approval_requested]
`);
    const row = await s.a.request(deployRequest({ arguments: { model_id: 'm-1', env: 'prod', api_key: 'sk-live-123' } }));
    await s.b.request(deployRequest({ arguments: { model_id: 'm-1', env: 'prod', api_key: 'sk-live-123' } }));
    const queued = await s.b.notifications.list();
    expect(queued.map((d) => [d.dedupeKey, d.status, d.origin]).sort()).toEqual([
      [`approval_requested:${row.id}:ops-hook`, 'pending', 'server-a'],
      [`approval_requested:${row.id}:ops-slack`, 'pending', 'server-a'],
    ]);
    expect(queued[0]!.body).not.toContain('sk-live-123');
    expect(await s.a.notifications.list({ channel: 'ops-slack' })).toHaveLength(1);
    expect(await s.a.notifications.list({ event: 'approval_expiring' })).toHaveLength(0);
    expect(await s.a.notifications.list({ before: Math.max(...ids(queued)) })).toHaveLength(1);
    expect(await s.a.notifications.counts()).toEqual({ pending: 2, sending: 0, delivered: 0, failed: 0 });
  });

  it('never costs a request whose notification cannot be queued', async () => {
    await fresh();
    s.use(webhook('http://127.0.0.1:9/hook'));
    await s.a.exec(
      kind === 'SQLite'
        ? `CREATE TRIGGER refuse_notifications BEFORE INSERT ON notification_deliveries BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`
        : `CREATE FUNCTION refuse_notifications() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
           CREATE TRIGGER refuse_notifications BEFORE INSERT ON notification_deliveries FOR EACH ROW EXECUTE FUNCTION refuse_notifications();`,
    );
    const errors = console.error;
    console.error = () => {};
    try {
      const row = await s.a.request(deployRequest());
      expect(row.status).toBe('pending');
      // The request committed (with its audit rows on PostgreSQL): the other server finds it pending.
      expect(await s.b.request(deployRequest())).toMatchObject({ id: row.id, status: 'pending' });
    } finally {
      console.error = errors;
    }
    expect(await s.a.notifications.list()).toHaveLength(0);
  });

  it('queues the notification of a request with the request, or not at all', async () => {
    await fresh();
    s.use(webhook('http://127.0.0.1:9/hook'));
    failAfterQueueing = true;
    perTest.push(() => (failAfterQueueing = false));
    await expect(s.a.request(deployRequest())).rejects.toThrow('the listener failed after queueing');
    expect(await s.b.notifications.list()).toHaveLength(0);
    failAfterQueueing = false;
    // The request rolled back with its notification: asking again makes a new request, and queues it.
    const row = await s.b.request(deployRequest());
    expect((await s.a.notifications.list()).map((d) => [d.subject, d.origin])).toEqual([[row.id, 'server-b']]);
  });

  it('claims each due row for one server only, however many claims race', async () => {
    await fresh();
    s.use(webhook('http://127.0.0.1:9/hook'));
    for (let i = 0; i < 24; i++) await (i % 2 ? s.a : s.b).request(deployRequest({ arguments: { model_id: `m-${i}`, env: 'prod' } }));
    const at = now() + 1;
    const claims = await Promise.all([s.a, s.b, s.a, s.b].map((x) => Promise.resolve().then(() => x.notifications.claim(at, 8))));
    const rest = await s.a.notifications.claim(at, 100);
    const all = [...claims.flat(), ...rest];
    expect(all).toHaveLength(24);
    expect(new Set(ids(all)).size).toBe(24);
    expect(all.every((d) => d.status === 'sending' && d.attempts === 1 && d.claimToken)).toBe(true);
    // Nothing is due any more until the leases run out.
    expect(await s.b.notifications.claim(at + 1)).toEqual([]);
    expect((await s.b.notifications.counts()).sending).toBe(24);
  });

  it('claims a row again when its lease runs out, and fails it when no attempt is left', async () => {
    await fresh();
    s.use(webhook('http://127.0.0.1:9/hook', '    max_attempts: 2\n'));
    await s.a.request(deployRequest());
    const at = now() + 1;
    const [first] = await s.a.notifications.claim(at);
    expect(first).toMatchObject({ status: 'sending', attempts: 1 });
    expect(await s.b.notifications.claim(at + 1)).toEqual([]);
    // Server a died mid-send: its lease runs out and server b claims the row (its second attempt).
    const later = first!.leaseUntil! + 1;
    const [again] = await s.b.notifications.claim(later);
    expect(again).toMatchObject({ id: first!.id, attempts: 2 });
    expect(again!.claimToken).not.toBe(first!.claimToken);
    // Server b died too, and no attempt is left: the row fails and says why.
    expect(await s.a.notifications.claim(again!.leaseUntil! + 1)).toEqual([]);
    expect((await s.a.notifications.list())[0]).toMatchObject({ status: 'failed', attempts: 2, lastError: '(the process sending it stopped; no attempt left)' });
  });

  it('sends each due notification once, signed, while both servers deliver', async () => {
    const r = await receiver();
    await fresh();
    s.use(webhook(r.url));
    for (let i = 0; i < 30; i++) await (i % 2 ? s.a : s.b).request(deployRequest({ arguments: { model_id: `m-${i}`, env: 'prod' } }));
    for (const x of [s.a, s.b]) {
      x.notifications.startDelivery({ intervalMs: 5 });
      perTest.push(() => x.notifications.stopDelivery());
    }
    expect(s.a.notifications.deliveryRunning).toBe(true);
    await within(10_000, async () => (await s.a.notifications.counts()).delivered === 30);
    const keys = r.got.map((g) => String(g.headers['x-swarm-delivery']));
    expect(keys).toHaveLength(30);
    expect(new Set(keys).size).toBe(30);
    expect(r.got.every((g) => g.signed && g.headers['x-swarm-event'] === 'approval_requested')).toBe(true);
    expect(await s.b.notifications.list({ status: 'delivered', limit: 500 })).toHaveLength(30);
    await s.a.notifications.stopDelivery();
    expect(s.a.notifications.deliveryRunning).toBe(false);
  });

  it('stops delivering once the send in flight has recorded how it ended', async () => {
    let answer: (status: number) => void = () => {};
    const r = await receiver([new Promise<number>((resolve) => (answer = resolve))]);
    await fresh();
    s.use(webhook(r.url));
    await s.a.request(deployRequest());
    s.a.notifications.startDelivery({ intervalMs: 5 });
    await within(5_000, () => r.got.length === 1);
    let stopped = false;
    const stopping = s.a.notifications.stopDelivery().then(() => (stopped = true));
    expect(s.a.notifications.deliveryRunning).toBe(false);
    // The receiver has not answered: the row is still being sent, and stopping waits for it.
    expect((await s.b.notifications.list())[0]).toMatchObject({ status: 'sending', attempts: 1 });
    expect(stopped).toBe(false);
    answer(200);
    await stopping;
    expect((await s.b.notifications.list())[0]).toMatchObject({ status: 'delivered', attempts: 1, lastStatus: 200 });
    expect(r.got).toHaveLength(1);
  });

  it('retries a 5xx with backoff on either server, and refuses a 4xx at once', async () => {
    const r = await receiver([503]);
    const refusing = await receiver([400]);
    await fresh();
    s.use(`${webhook(r.url)}
  - id: strict
    kind: webhook
    url: ${refusing.url}
    secret_env: SWARM_HOOK_SECRET
`);
    await s.a.request(deployRequest());
    const errors = console.error;
    console.error = () => {};
    try {
      expect(await s.a.notifications.deliverDue()).toBe(2);
    } finally {
      console.error = errors;
    }
    const [retrying] = await s.b.notifications.list({ channel: 'ops-hook' });
    expect(retrying).toMatchObject({ status: 'pending', attempts: 1, lastStatus: 503, lastError: 'HTTP 503: receiver broke' });
    // The first retry waits two seconds: not yet due, then due for whichever server looks.
    expect(retrying!.nextAttemptAt - retrying!.updatedAt).toBeCloseTo(2, 3);
    expect(await s.b.notifications.deliverDue()).toBe(0);
    expect(await s.b.notifications.deliverDue(retrying!.nextAttemptAt + 0.01)).toBe(1);
    expect((await s.a.notifications.list({ channel: 'ops-hook' }))[0]).toMatchObject({ status: 'delivered', attempts: 2, lastStatus: 200, lastError: null });
    expect((await s.a.notifications.list({ channel: 'strict' }))[0]).toMatchObject({ status: 'failed', attempts: 1, lastStatus: 400, lastError: 'HTTP 400: receiver broke' });
    expect(r.got.map((g) => g.signed)).toEqual([true, true]);
    expect(await s.a.notifications.counts()).toEqual({ pending: 0, sending: 0, delivered: 1, failed: 1 });
  });

  it('tells a request nearing its expiry once, when both servers tick at the same moment', async () => {
    const r = await receiver();
    await fresh();
    s.use(webhook(r.url, 'expiring: { before: 15m }\n'));
    const row = await s.a.request(deployRequest({ expiresInSeconds: 3600 }));
    // A request that lives shorter than the window is announced only when requested.
    await s.b.request(deployRequest({ arguments: { model_id: 'short', env: 'prod' }, expiresInSeconds: 600 }));
    await Promise.all([s.a.notifications.tick(row.requestedAt + 60), s.b.notifications.tick(row.requestedAt + 60)]);
    expect(await s.a.notifications.list({ event: 'approval_expiring' })).toHaveLength(0);
    const near = row.expiresAt - 14 * 60;
    await Promise.all([s.a, s.b, s.a, s.b].map((x, i) => Promise.resolve().then(() => x.notifications.tick(near + (i >> 1)))));
    await Promise.all([s.a.notifications.tick(near + 60), s.b.notifications.tick(near + 60)]);
    const expiring = await s.b.notifications.list({ event: 'approval_expiring' });
    expect(expiring.map((d) => [d.subject, d.dedupeKey])).toEqual([[row.id, `approval_expiring:${row.id}:ops-hook`]]);
    await s.b.notifications.deliverDue();
    const hit = r.got.find((g) => g.json.event === 'approval_expiring')!;
    expect(hit.signed).toBe(true);
    expect(hit.json.approval).toMatchObject({ id: row.id, seconds_left: 14 * 60 });
  });

  it('tells a denial burst once per window, when both servers tick at the same moment', async () => {
    const r = await receiver();
    await fresh();
    s.use(webhook(r.url, 'bursts:\n  - { id: shadow-burst, denials: 5, within: 60s, agent: shadow_agent }\n'));
    const t = now();
    for (let i = 0; i < 4; i++) await s.a.deny('shadow_agent', t - 10 + i);
    for (let i = 0; i < 10; i++) await s.b.deny('data_cleaner', t - 10 + i);
    await Promise.all([s.a.notifications.tick(t), s.b.notifications.tick(t)]);
    expect(await s.a.notifications.list({ event: 'denial_burst' })).toHaveLength(0);
    await s.b.deny('shadow_agent', t - 1);
    await Promise.all([s.a.notifications.tick(t), s.b.notifications.tick(t + 1), s.a.notifications.tick(t + 2), s.b.notifications.tick(t + 2)]);
    expect(await s.a.notifications.list({ event: 'denial_burst' })).toHaveLength(1);
    for (let i = 0; i < 10; i++) await s.a.deny('shadow_agent', t + 3);
    await Promise.all([s.a.notifications.tick(t + 30), s.b.notifications.tick(t + 59)]);
    expect(await s.b.notifications.list({ event: 'denial_burst' })).toHaveLength(1);
    // The next window: a new burst is told again, once.
    for (let i = 0; i < 5; i++) await s.b.deny('shadow_agent', t + 62);
    await Promise.all([s.a.notifications.tick(t + 63), s.b.notifications.tick(t + 64), s.b.notifications.tick(t + 63)]);
    const bursts = await s.a.notifications.list({ event: 'denial_burst' });
    expect(bursts).toHaveLength(2);
    expect(new Set(bursts.map((b) => b.subject))).toEqual(new Set(['shadow-burst']));
    await s.a.notifications.deliverDue();
    const told = r.got.map((g) => g.json).sort((x, y) => String(x.occurred_at).localeCompare(String(y.occurred_at)));
    expect(told[0]).toMatchObject({ event: 'denial_burst', burst: { id: 'shadow-burst', denials: 5, threshold: 5, within_seconds: 60, agent: 'shadow_agent' } });
    expect(String(told[0]!.link)).toMatch(/^https:\/\/swarm\.example\.com\/denials\?from=\d+&to=\d+&agent=shadow_agent$/);
    expect(r.got.every((g) => g.signed)).toBe(true);
  });
  it('gives each due row to exactly one of two deliverers claiming in processes of their own, at the same moment', async () => {
    await fresh();
    const at = clock();
    const due = (i: number): QueuedDelivery => ({
      dedupeKey: `race:${i}`,
      channel: 'ops-hook',
      channelKind: 'webhook',
      event: 'approval_requested',
      subject: `apr_race_${i}`,
      body: '{}',
      maxAttempts: 5,
      nextAttemptAt: at,
      origin: 'test',
      createdAt: at,
      updatedAt: at,
    });
    const count = 600;
    expect(await new SqlNotificationStore(s.a.database).queue(Array.from({ length: count }, (_, i) => due(i)))).toBe(count);
    const [first, second] = await race(s.location, at + 1, ['racer-1', 'racer-2']);
    // Every row claimed once: by one racer or the other, never both, never twice.
    expect(first!.length + second!.length).toBe(count);
    expect(new Set([...first!, ...second!]).size).toBe(count);
    // Both took part (the race was real), and the table agrees with what each was given.
    expect(first!.length).toBeGreaterThan(0);
    expect(second!.length).toBeGreaterThan(0);
    const rows = await s.a.notifications.list({ limit: 500 + count });
    expect(rows.every((d) => d.status === 'sending' && d.attempts === 1)).toBe(true);
    const byToken = (token: string) => rows.filter((d) => d.claimToken === token).map((d) => d.id).sort((x, y) => x - y);
    expect(byToken('racer-1')).toEqual([...first!].sort((x, y) => x - y));
    expect(byToken('racer-2')).toEqual([...second!].sort((x, y) => x - y));
  }, 90_000);
});

/**
 * A deliverer in a process of its own (SQLite file or PostgreSQL URL in RACE_DB): it says "ready", waits for "go" with
 * the moment to start, spins until then (so that both racers start together, each on a core), then claims one row at
 * a time under its token until none is due, and prints the ids it was given.
 */
const RACER = `
import { openDatabase } from './db/client.ts';
import { openPool } from './db/pg/client.ts';
import { PostgresDatabase, SqliteDatabase } from './db/dialect.ts';
import { SqlNotificationStore } from './lib/notifications/store.ts';
const target = process.env.RACE_DB;
const pool = target.startsWith('postgres://') ? openPool({ url: target, max: 1 }) : undefined;
const sqlite = pool ? undefined : openDatabase({ path: target, migrate: false });
const store = new SqlNotificationStore(pool ? new PostgresDatabase(pool) : new SqliteDatabase(sqlite.$client));
const now = Number(process.env.RACE_NOW);
const claim = { token: process.env.RACE_TOKEN, leaseUntil: now + 600 };
await store.claim(now, claim, 0);
process.stdout.write('ready\\n');
const startAt = await new Promise((resolve) => process.stdin.once('data', (d) => resolve(Number(String(d).trim()))));
while (Date.now() < startAt) {}
const got = [];
for (;;) {
  const rows = await store.claim(now, claim, 1);
  if (rows.length === 0) break;
  got.push(...rows.map((r) => r.id));
}
if (pool) await pool.end();
else sqlite.$client.close();
process.stdout.write(JSON.stringify(got) + '\\n');
`;

/** Two racers (or more) on one database; the ids each claimed, in the order of `tokens`. */
async function race(location: string, now: number, tokens: string[]): Promise<number[][]> {
  const racers = tokens.map((token) => {
    const p = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', RACER], {
      cwd: process.cwd(),
      env: { ...process.env, RACE_DB: location, RACE_NOW: String(now), RACE_TOKEN: token },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let readied: () => void = () => {};
    const ready = new Promise<void>((resolve) => (readied = resolve));
    p.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.startsWith('ready\n')) readied();
    });
    p.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const done = new Promise<number[]>((resolve, reject) => {
      p.on('error', reject);
      p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.slice('ready\n'.length)) as number[]) : reject(new Error(`racer exited ${code}: ${err}`))));
    });
    return { p, ready: Promise.race([ready, done.then(() => undefined)]), done };
  });
  await Promise.all(racers.map((r) => r.ready));
  const startAt = Date.now() + 200;
  for (const r of racers) r.p.stdin.end(`${startAt}\n`);
  return Promise.all(racers.map((r) => r.done));
}
