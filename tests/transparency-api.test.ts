/**
 * GET /api/v1/transparency and GET /api/v1/flags/history inside one process: the real route handlers and wrapper, a
 * real SQLite file, and an environment with two bad flag variables (set before the application is imported).
 */
import { join } from 'node:path';
import { callRoute, useTempServerEnv, type RouteHandler } from './support/in-process-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const server = useTempServerEnv('transparency', { env: { SWARM_FLAG_NOT_A_FLAG: '1', SWARM_FLAG_BATCH_RUNNER: 'maybe' } });
const dir = server.dir;

const { getSqliteApp } = await import('@/lib/app');
const transparency = await import('@/app/api/v1/transparency/route');
const history = await import('@/app/api/v1/flags/history/route');
const flag = await import('@/app/api/v1/flags/[name]/route');
const check = await import('@/app/api/v1/permissions/check/route');
const { FLAG_CATALOG } = await import('@/lib/flags/catalog');

type Handler = RouteHandler;
const ADMIN = server.adminToken;
let viewer = '';
let operator = '';

const call = callRoute;

interface Change {
  name: string;
  action: 'set' | 'unset';
  layer: string;
  old_value: boolean | null;
  new_value: boolean | null;
  changed_by: string;
  changed_at: number;
  reason: string;
}
interface Flag {
  name: string;
  tier: string;
  value: boolean;
  layer: string;
  description: string;
  owner: string | null;
  guards: { tools: string[]; paths: string[] };
  override: { value: boolean; set_by: string; set_at: number; reason: string } | null;
  last_change: Change | null;
}
interface Report {
  summary: { flags: number; problems: number; overridden: number };
  tiers: { tier: string; title: string; flags: Flag[] }[];
  problems: { kind: string; variable: string | null; message: string }[];
  sources: {
    registered: { name: string }[];
    policy: { file: { path: string; loaded_at: number | null; error: string | null }; rules: { id: string; decision: string; priority: number; conditions: string[] }[] };
    agents: { file: { path: string; error: string | null }; agents: { name: string; tools: string[] }[] };
  };
  history: { filter: { name: string | null; by: string | null }; changes: Change[]; next_cursor: string | null };
}
interface ErrorBody {
  error: { code: string; message: string; rule_source?: string; issues?: { in: string; path: string; message: string }[] };
}

const report = async (url = '/api/v1/transparency', token = viewer) => {
  const r = await call(transparency.GET, url, { token });
  expect(r.status).toBe(200);
  return (await r.json()) as Report;
};
const flagIn = (rep: Report, name: string) => rep.tiers.flatMap((t) => t.flags).find((f) => f.name === name)!;
const put = (name: string, body: unknown, token = ADMIN) =>
  call(flag.PUT, `/api/v1/flags/${name}`, { method: 'PUT', token, params: { name }, body: JSON.stringify(body) });
const del = (name: string, body: unknown, token = ADMIN) =>
  call(flag.DELETE, `/api/v1/flags/${name}`, { method: 'DELETE', token, params: { name }, body: JSON.stringify(body) });

beforeAll(async () => {
  const app = getSqliteApp();
  await app.auth.createUser('victor', 'viewer', 'viewer-password');
  await app.auth.createUser('olivia', 'operator', 'operator-password');
  viewer = await app.auth.createToken({ username: 'victor' }, 't');
  operator = await app.auth.createToken({ username: 'olivia' }, 't');
});
afterAll(async () => {
  await getSqliteApp().close();
  server.remove();
});

describe('GET /api/v1/transparency', () => {
  it('is readable by a viewer: every flag by tier, the sources in force and the history', async () => {
    const rep = await report();
    expect(rep.tiers.map((t) => t.tier)).toEqual(['invariant', 'flag', 'experiment']);
    expect(rep.tiers.flatMap((t) => t.flags)).toHaveLength(FLAG_CATALOG.length);
    expect(flagIn(rep, 'audit_trail_security_events')).toMatchObject({ tier: 'invariant', value: true, layer: 'default', owner: 'compliance' });
    expect(flagIn(rep, 'auto_fairness_audit')).toMatchObject({ guards: { tools: ['fairness_audit'], paths: [] }, last_change: null });
    expect(rep.sources.registered.map((s) => s.name)).toEqual(['rbac', 'agent_allowlist', 'feature_flags', 'policy', 'hitl', 'mcp_pins']);
    expect(rep.sources.policy.file).toMatchObject({ path: process.env.SWARM_POLICY_FILE, error: null });
    expect(rep.sources.policy.file.loaded_at).toBeGreaterThan(0);
    expect(rep.sources.policy.rules.find((r) => r.id === 'bfsi/no-pii-export')).toMatchObject({
      decision: 'DENY',
      priority: 950,
      conditions: ['tool is export_raw_data', 'argument contains_pii is true'],
    });
    expect(rep.sources.agents.file.path).toBe(join(dir, 'config', 'agents.yaml'));
    expect(rep.sources.agents.agents.find((a) => a.name === 'evaluator')?.tools).toContain('fairness_audit');
  });

  it('reports the unknown flag variable and the value that is not a boolean', async () => {
    const rep = await report();
    expect(rep.problems).toEqual([
      expect.objectContaining({ kind: 'unknown_flag', variable: 'SWARM_FLAG_NOT_A_FLAG' }),
      expect.objectContaining({ kind: 'not_boolean', variable: 'SWARM_FLAG_BATCH_RUNNER', message: expect.stringContaining('"maybe" is not a boolean') }),
    ]);
    expect(rep.summary.problems).toBe(2);
    expect(flagIn(rep, 'batch_runner')).toMatchObject({ value: true, layer: 'default' });
  });

  it('answers 401 without credentials', async () => {
    const r = await call(transparency.GET, '/api/v1/transparency');
    expect(r.status).toBe(401);
    expect(((await r.json()) as ErrorBody).error.rule_source).toBe('rbac:viewer');
  });

  it('answers 400 with the issues for a filter that is not valid', async () => {
    for (const url of ['/api/v1/transparency?name=Not%20A%20Flag', '/api/v1/transparency?who=ada', '/api/v1/flags/history?before=yesterday']) {
      const r = await call(url.includes('history') ? history.GET : transparency.GET, url, { token: viewer });
      expect(r.status, url).toBe(400);
      expect(((await r.json()) as ErrorBody).error.issues?.[0]?.in).toBe('query');
    }
  });
});

describe('flag changes over REST, as the history shows them', () => {
  it('records an admin override with who, when, old and new value and reason, and the engine denies the guarded tool', async () => {
    const before = Date.now() / 1000;
    const r = await put('auto_fairness_audit', { value: false, reason: 'audit service down, INC-42' });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ value: false, layer: 'override', override: { set_by: 'admin', reason: 'audit service down, INC-42' } });

    const rep = await report();
    const f = flagIn(rep, 'auto_fairness_audit');
    expect(f).toMatchObject({ value: false, layer: 'override', override: { value: false, set_by: 'admin' } });
    expect(f.last_change).toMatchObject({ action: 'set', layer: 'override', old_value: true, new_value: false, changed_by: 'admin', reason: 'audit service down, INC-42' });
    expect(f.last_change!.changed_at).toBeGreaterThanOrEqual(before - 1);
    expect(rep.summary.overridden).toBe(1);
    expect(rep.history.changes[0]).toMatchObject({ name: 'auto_fairness_audit', changed_by: 'admin' });

    const d = await call(check.POST, '/api/v1/permissions/check', {
      method: 'POST',
      token: ADMIN,
      body: JSON.stringify({ agent: 'evaluator', tool: 'fairness_audit', arguments: { model_id: 'm' } }),
    });
    expect(await d.json()).toMatchObject({ decision: 'DENY', rule_source: 'flag:auto_fairness_audit' });
  });

  it('records the reset as the removal of the override, and the flag falls back to its default', async () => {
    const r = await del('auto_fairness_audit', { reason: 'audit service back' });
    expect(r.status).toBe(200);
    const rep = await report();
    expect(flagIn(rep, 'auto_fairness_audit')).toMatchObject({ value: true, layer: 'default', override: null, last_change: { action: 'unset', new_value: true } });
  });

  it('refuses to turn the invariant off, records the attempt as a security event and as a refused entry of the history', async () => {
    const r = await put('audit_trail_security_events', { value: false, reason: 'too many rows' });
    expect(r.status).toBe(403);
    const body = (await r.json()) as ErrorBody;
    expect(body.error).toMatchObject({ code: 'INVARIANT' });
    expect(body.error.message).toMatch(/invariant: it cannot be turned off/);
    expect((await getSqliteApp().securityEvents.ofType('flag.refused', 1))[0]).toMatchObject({ actor: 'admin', actorRole: 'admin', target: 'audit_trail_security_events' });
    const rep = await report('/api/v1/transparency?name=audit_trail_security_events');
    expect(rep.history.changes).toMatchObject([{ action: 'refused', old_value: true, new_value: false, changed_by: 'admin' }]);
    expect(rep.history.changes[0]!.reason).toMatch(/^too many rows \(refused: .*invariant/);
    // A refusal is not the flag's last change: nothing changed.
    expect(flagIn(rep, 'audit_trail_security_events')).toMatchObject({ value: true, layer: 'default', last_change: null, changeable: false });
  });

  it('refuses a change by a viewer or an operator (rbac:admin), and a change without a reason (400)', async () => {
    for (const token of [viewer, operator]) {
      const r = await put('cron_scheduler', { value: false, reason: 'x' }, token);
      expect(r.status).toBe(403);
      expect(((await r.json()) as ErrorBody).error.rule_source).toMatch(/^(rbac:admin|policy:bfsi\/viewers-read-only-flags)$/);
    }
    expect((await put('cron_scheduler', { value: false, reason: '  ' })).status).toBe(400);
    expect(flagIn(await report(), 'cron_scheduler').last_change).toBeNull();
    // Each refused attempt is in the history with who made it and what was asked; a 400 is not an attempt.
    const refused = (await (await call(history.GET, '/api/v1/flags/history?name=cron_scheduler', { token: viewer })).json()) as Report['history'];
    expect(refused.changes.map((c) => [c.action, c.changed_by, c.new_value])).toEqual([
      ['refused', 'olivia', false],
      ['refused', 'victor', false],
    ]);
  });
});

describe('GET /api/v1/flags/history', () => {
  const changes = async (query: string) => {
    const r = await call(history.GET, `/api/v1/flags/history${query}`, { token: viewer });
    expect(r.status).toBe(200);
    return (await r.json()) as Report['history'];
  };

  it('filters by flag and by who, newest first', async () => {
    const app = getSqliteApp();
    await app.flags.setOverride('cron_scheduler', false, 'cli:root', 'maintenance window');
    await app.flags.setOverride('email_notifications', false, 'admin', 'mail relay down');

    expect((await changes('')).changes.map((c) => c.name)).toEqual([
      'email_notifications',
      'cron_scheduler',
      'cron_scheduler', // refused: olivia, an operator
      'cron_scheduler', // refused: victor, a viewer
      'audit_trail_security_events', // refused: an invariant
      'auto_fairness_audit',
      'auto_fairness_audit',
    ]);
    expect((await changes('?name=auto_fairness_audit')).changes.map((c) => c.action)).toEqual(['unset', 'set']);
    expect((await changes('?by=cli:root')).changes).toEqual([expect.objectContaining({ name: 'cron_scheduler', changed_by: 'cli:root', reason: 'maintenance window' })]);
    expect((await changes('?name=cron_scheduler&by=admin')).changes).toEqual([]);
    // What a blank filter form sends: no filter.
    expect((await changes('?name=&by=')).changes).toHaveLength(7);
  });

  it('pages with next_cursor, and the transparency JSON filters the same way', async () => {
    const first = await changes('?limit=4');
    expect(first.changes).toHaveLength(4);
    const second = await changes(`?limit=4&before=${first.next_cursor}`);
    expect(second.next_cursor).toBeNull();
    expect(second.changes.map((c) => [c.action, c.name])).toEqual([
      ['refused', 'audit_trail_security_events'],
      ['unset', 'auto_fairness_audit'],
      ['set', 'auto_fairness_audit'],
    ]);
    const rep = await report('/api/v1/transparency?by=admin');
    expect(rep.history.filter).toEqual({ name: null, by: 'admin' });
    expect(rep.history.changes.map((c) => c.name)).toEqual(['email_notifications', 'audit_trail_security_events', 'auto_fairness_audit', 'auto_fairness_audit']);
  });
});
