/**
 * Several decision listener processes on one port and one SQLite database (lib/server/workers.ts), as `npm start`
 * runs them: every call answered by whichever worker took the connection, every denial recorded once in one intact
 * chain, the metrics of all workers summed whichever answers the scrape, a worker that dies replaced, and a graceful
 * stop that loses no acknowledged denial.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTempServerEnv } from './support/in-process-api';

const METRICS_TOKEN = 'metrics-token-workers-0123456789';
const server = useTempServerEnv('workers', { policy: 'empty', env: { SWARM_METRICS_TOKEN: METRICS_TOKEN } });
const { createApp } = await import('@/lib/app');
const { verifyAudit } = await import('@/lib/audit/trail/verify');
const { keyDirFor, trustedVerifierKeys } = await import('@/lib/audit/trail/checkpoints');
const { listenerWorkers } = await import('@/lib/server/workers');

let pool: ChildProcessWithoutNullStreams;
let output = '';
let base = '';
let pids: number[] = [];
let cleaner = '';
let trainer = '';

beforeAll(async () => {
  const app = createApp({ dbPath: process.env.SWARM_DB! });
  await app.bootstrap();
  cleaner = await app.auth.createToken({ agent: 'data_cleaner' }, 'cleaner');
  trainer = await app.auth.createToken({ agent: 'trainer' }, 'trainer');
  app.close();
  pool = spawn(process.execPath, ['--import', 'tsx', 'tests/fixtures/listener-pool.ts', '2'], { env: process.env });
  pool.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const ready = await new Promise<{ port: number; pids: number[] }>((resolve, reject) => {
    pool.stdout.on('data', (c: Buffer) => {
      output += c.toString();
      const line = output.split('\n').find((l) => l.startsWith('{"port"'));
      if (line) resolve(JSON.parse(line) as { port: number; pids: number[] });
    });
    pool.once('exit', (code) => reject(new Error(`the pool exited (${code}): ${output}`)));
  });
  base = `http://127.0.0.1:${ready.port}`;
  pids = ready.pids;
}, 60_000);
afterAll(() => {
  if (pool.exitCode === null) pool.kill('SIGKILL');
  server.remove();
});

type Answer = { decision: string; decision_id: string };
const check = (token: string, agent: string, tool: string, i: number) =>
  fetch(`${base}/api/v1/permissions/check`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent, tool, arguments: { n: i } }),
  });
/** 1 in 3 calls is denied (the data cleaner may not train), the rest allowed. */
const mixed = (i: number) => (i % 3 === 0 ? check(cleaner, 'data_cleaner', 'train_model', i) : check(trainer, 'trainer', 'train_model', i));

/** The newest denial's id (0: none), to tell the rows of a burst from those before it. */
function maxDenialId(): number {
  const app = createApp({ dbPath: process.env.SWARM_DB! });
  try {
    return (app.db.$client.prepare('SELECT COALESCE(MAX(id), 0) FROM permission_denials').pluck().get() as number) ?? 0;
  } finally {
    app.close();
  }
}

/** The burst's call numbers (arguments.n) of the data cleaner's denials written after `id`. */
function deniedCallsAfter(id: number): number[] {
  const app = createApp({ dbPath: process.env.SWARM_DB! });
  try {
    const rows = app.db.$client.prepare("SELECT arguments_json FROM permission_denials WHERE id > ? AND agent_name = 'data_cleaner'").pluck().all(id) as string[];
    return rows.map((json) => (JSON.parse(json) as { n: number }).n);
  } finally {
    app.close();
  }
}

function denialIds(): Set<string> {
  const app = createApp({ dbPath: process.env.SWARM_DB! });
  try {
    return new Set(app.db.$client.prepare('SELECT decision_id FROM permission_denials WHERE decision_id IS NOT NULL').pluck().all() as string[]);
  } finally {
    app.close();
  }
}

async function toolDecisions(): Promise<number> {
  const r = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(r.status).toBe(200);
  let n = 0;
  for (const line of (await r.text()).split('\n')) if (line.startsWith('swarm_decisions_total{') && line.includes('kind="tool"')) n += Number(line.split(' ').pop());
  return n;
}

describe('SWARM_LISTENER_WORKERS', () => {
  it('defaults to one per core (at most 4) and refuses anything but a whole number from 1 to 64', () => {
    expect(listenerWorkers({})).toBeGreaterThanOrEqual(1);
    expect(listenerWorkers({})).toBeLessThanOrEqual(4);
    expect(listenerWorkers({ SWARM_LISTENER_WORKERS: '3' })).toBe(3);
    for (const bad of ['0', '65', '1.5', 'two', '-1']) {
      expect(() => listenerWorkers({ SWARM_LISTENER_WORKERS: bad })).toThrow(`SWARM_LISTENER_WORKERS must be a whole number from 1 to 64 (the number of decision listener processes), not "${bad}".`);
    }
  });
});

describe('several decision listener processes on one database', () => {
  it('answers every call; each denial is recorded once, in one intact chain, and the metrics are summed over the workers', async () => {
    expect(pids).toHaveLength(2);
    const before = await toolDecisions();
    const answers = await Promise.all(Array.from({ length: 120 }, (_, i) => mixed(i).then(async (r) => ({ status: r.status, body: (await r.json()) as Answer }))));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const denied = answers.filter((a) => a.body.decision === 'DENY').map((a) => a.body.decision_id);
    expect(denied).toHaveLength(40);
    expect(answers.filter((a) => a.body.decision === 'ALLOW')).toHaveLength(80);
    const ids = denialIds();
    for (const id of denied) expect(ids.has(id)).toBe(true);
    const app = createApp({ dbPath: process.env.SWARM_DB! });
    try {
      // With the keys `swarm audit verify` trusts: the server's own key folder signs checkpoints every 10 s.
      const keys = trustedVerifierKeys(keyDirFor(process.env.SWARM_DB!, process.env), process.env);
      const { failures } = verifyAudit(app.db.$client, keys);
      expect(failures, JSON.stringify(failures)).toEqual([]);
    } finally {
      app.close();
    }
    // Whichever worker answers the scrape, it counts the decisions of both.
    expect((await toolDecisions()) - before).toBe(120);
    expect((await toolDecisions()) - before).toBe(120);
  });

  it('replaces a worker that dies, and keeps answering meanwhile', async () => {
    process.kill(pids[0]!, 'SIGKILL');
    const deadline = Date.now() + 15_000;
    while (!output.includes('starting another') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(output).toContain('a decision listener worker stopped; starting another');
    for (let i = 0; i < 10; i++) expect((await check(trainer, 'trainer', 'train_model', i)).status).toBe(200);
  });

  it('stops gracefully: every call a worker took is answered, every denial it acknowledged is in the trail', async () => {
    // The stop comes with the first answer of a burst of 60, while the others are still on their way.
    const lastDenial = maxDenialId();
    let settled = 0;
    let firstAnswer!: () => void;
    const answered = new Promise<void>((resolve) => (firstAnswer = resolve));
    const answeredCalls = new Set<number>();
    const calls = Array.from({ length: 60 }, (_, i) =>
      mixed(i)
        .then(
          async (r) => (firstAnswer(), answeredCalls.add(i), { status: r.status, body: (await r.json()) as Answer }),
          // Not answered: refused or closed before a worker took it, or taken and dropped: the trail tells which.
          () => undefined,
        )
        .finally(() => void settled++),
    );
    await answered;
    const exited = new Promise<number | null>((resolve) => pool.once('exit', resolve));
    pool.kill('SIGTERM');
    expect(settled).toBeLessThan(60);
    const answers = (await Promise.all(calls)).filter((a) => a !== undefined);
    expect(await exited).toBe(0);
    expect(output).toContain('stopped');
    expect(answers.length).toBeGreaterThan(0);
    const ids = denialIds();
    for (const a of answers) {
      expect(a.status).toBe(200);
      if (a.body.decision === 'DENY') expect(ids.has(a.body.decision_id)).toBe(true);
    }
    // A call a worker took and decided left its denial in the trail: each was answered (a worker stopped under a taken
    // call, as a SIGKILL would, leaves a denial nobody heard of). A connection closed before a worker took the call
    // (an idle keep-alive closed by the stop, a refused connect) leaves nothing, and may fail on the client.
    const deniedInTheBurst = deniedCallsAfter(lastDenial);
    expect(deniedInTheBurst.length).toBeGreaterThan(0);
    expect(deniedInTheBurst.filter((n) => !answeredCalls.has(n))).toEqual([]);
  });
});
