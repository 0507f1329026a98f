/**
 * swarm users, tokens, features, approvals and denials on PostgreSQL (SWARM_DB=postgres://…), end to end: the real CLI
 * entry (run) against a real cluster (the test run's), one migrated database, and the results checked in that
 * database with the production stores and plain SQL. The same outputs, exit codes and security events as on SQLite
 * (cli/cli.test.ts). No mocks.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '@/db/pg/client';
import { openApp } from '@/lib/app';
import type { PostgresApp } from '@/lib/app';
import { sha256 } from '@/lib/auth/secrets';
import { cliActor, POSTGRES_COMMANDS } from '@/cli/context';
import { run } from '@/cli/run';
import { cliWorkspace, runSwarmBinary } from '@/lib/test-support/cli';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { TEST_APPROVAL_KEY } from '@/lib/test-support/temp-app';

const postgres = usePostgres();
let dir: string;
let env: NodeJS.ProcessEnv;
let app: PostgresApp;
let pool: pg.Pool;
const approvalIds: Record<'a' | 'b' | 'c' | 'd', string> = { a: '', b: '', c: '', d: '' };
const TOKEN = /swt_[A-Za-z0-9_-]+/g;
const ME = cliActor({});

/** The real CLI entry, in this process, with its output captured. */
async function swarm(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await run({ io: { out: (t) => void (stdout += t), err: (t) => void (stderr += t) }, env }, args);
  return { code, stdout, stderr };
}

async function rows<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  return (await pool.query<T>(text, values)).rows;
}

async function events(type: string) {
  return app.securityEvents.ofType(type);
}

beforeAll(async () => {
  const database = await postgres.freshDatabase('cli');
  const ws = cliWorkspace('swarm-clipg-', 'unused.db');
  dir = ws.dir;
  // The installation's key, as every server and command of a PostgreSQL installation has it (users and tokens are sealed).
  env = { ...ws.env, SWARM_DB: postgres.cluster.urlOf(database), SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY };
  app = (await openApp({ dbPath: env.SWARM_DB!, configDir: dir, env: { SWARM_APPROVAL_KEY: TEST_APPROVAL_KEY }, watchConfig: false })) as PostgresApp;
  pool = app.pool;
  await app.auth.createUser('root', 'admin');
  await app.auth.createUser('olivia', 'operator');
  await app.auth.createUser('victor', 'viewer');

  const now = Date.now() / 1000;
  const denial = (toolName: string, agentName: string, ruleSource: string, reason: string, ageSeconds: number) =>
    inTransaction(pool, (tx) =>
      app.recorder.appendDenialIn(tx, { toolName, agentName, ruleSource, reason, userRole: 'viewer', principal: `agent:${agentName}`, timestamp: now - ageSeconds }),
    );
  await denial('deploy_serving', 'deployer', 'policy:no-friday-deploys', 'No production deployments before the weekend.', 60);
  await denial('deploy_serving', 'deployer', 'hitl:deploy', `Waiting for an operator, ${'very '.repeat(30)}long reason`, 120);
  await denial('export_raw_data', 'compliance_agent', 'flag:raw_data_export', '=HYPERLINK("http://x") formula, with "quotes"', 30);
  await denial('clean_dataset', 'trainer', 'agent_allowlist', 'trainer may not call clean_dataset', 2 * 24 * 3600);

  const request = async (target: string) =>
    (
      await app.approvals.request({
        gate: 'deploy',
        agent: 'deployer',
        tool: 'deploy_serving',
        arguments: { model: 'churn-v7', env: target },
        requestedBy: 'agent:deployer',
        ruleSource: 'hitl:deploy',
        reason: 'Deployments wait for an operator.',
        expiresInSeconds: 3600,
      })
    ).id;
  approvalIds.a = await request('prod');
  approvalIds.b = await request('staging');
  approvalIds.c = await request('canary');
  approvalIds.d = await request('eu');
}, 60_000);

afterAll(async () => {
  await app?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('swarm users and tokens on PostgreSQL', () => {
  it('creates a user and its token in one go: the token printed once, only its hash stored, both changes recorded', async () => {
    const r = await swarm('users', 'add', 'alice', '--role', 'auditor', '--password', 'correct-horse-battery', '--token-name', 'alice laptop');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Created user "alice" with role auditor and a password.');
    expect(r.stdout).toContain('will not be shown again');
    const tokens = r.stdout.match(TOKEN) ?? [];
    expect(tokens).toHaveLength(1);
    const token = tokens[0]!;

    const [user] = await rows<{ id: number; role: string; password_hash: string | null }>('SELECT id, role, password_hash FROM users WHERE username = $1', ['alice']);
    expect(user).toMatchObject({ role: 'auditor' });
    expect(user!.password_hash).not.toContain('correct-horse-battery');
    const stored = await rows<{ token_hash: string; name: string; user_id: number }>('SELECT token_hash, name, user_id FROM api_tokens WHERE user_id = $1', [user!.id]);
    // Stored as a keyed hash (the pepper kept with the keys), not the bare SHA-256 anyone could test a guess against.
    expect(stored).toEqual([{ token_hash: app.credentials.seal().secretHash(token), name: 'alice laptop', user_id: user!.id }]);
    expect(stored[0]!.token_hash).toMatch(/^k1:[0-9a-f]{64}$/);
    expect(stored[0]!.token_hash).not.toContain(sha256(token));
    expect(await rows('SELECT 1 FROM api_tokens WHERE token_hash = $1 OR name = $1', [token])).toHaveLength(0);
    expect(await app.auth.principalForToken(token)).toEqual({ kind: 'user', id: 'alice', role: 'auditor', scopes: ['read'] });
    expect((await app.auth.verifyLogin('alice', 'correct-horse-battery'))?.username).toBe('alice');

    const [created] = await events('user.created');
    expect(created).toMatchObject({ actor: ME, outcome: 'succeeded', target: 'alice' });
    expect(JSON.parse(created!.detailJson!)).toEqual({ role: 'auditor', password: 'set' });
    const tokenEvent = (await events('token.created')).find((e) => e.actor === ME);
    expect(JSON.parse(tokenEvent!.detailJson!)).toEqual({ name: 'alice laptop', owner: 'alice', scopes: ['read'], expires_at: null });
  });

  it('refuses a user that exists, and writes nothing for it (no second token, no event)', async () => {
    const tokensBefore = (await rows('SELECT id FROM api_tokens')).length;
    const eventsBefore = (await events('user.created')).length;
    const r = await swarm('users', 'add', 'alice', '--role', 'admin');
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'error: User "alice" already exists.\n' });
    expect(await rows('SELECT id FROM api_tokens')).toHaveLength(tokensBefore);
    expect(await events('user.created')).toHaveLength(eventsBefore);
    expect((await app.auth.findUser('alice'))?.role).toBe('auditor');
  });

  it('refuses a user whose name is another\'s in other capitals, and writes nothing for it', async () => {
    const tokensBefore = (await rows('SELECT id FROM api_tokens')).length;
    const r = await swarm('users', 'add', 'ALICE', '--role', 'admin');
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'error: User "ALICE" already exists as "alice" (names are the same whatever the case of their letters).\n' });
    expect(await rows('SELECT id FROM api_tokens')).toHaveLength(tokensBefore);
    expect(await rows("SELECT id FROM users WHERE lower(username) = 'alice'")).toHaveLength(1);
  });

  it('changes a role, recorded; an unknown user is exit 1', async () => {
    const r = await swarm('users', 'set-role', 'alice', 'operator');
    expect(r).toEqual({ code: 0, stdout: 'User "alice" is now operator (was auditor).\n', stderr: '' });
    expect((await app.auth.findUser('alice'))?.role).toBe('operator');
    const [changed] = await events('user.role_changed');
    expect(changed).toMatchObject({ actor: ME, target: 'alice' });
    expect(JSON.parse(changed!.detailJson!)).toEqual({ from: 'auditor', to: 'operator' });

    const missing = await swarm('users', 'set-role', 'nobody', 'viewer');
    expect(missing).toEqual({ code: 1, stdout: '', stderr: 'error: there is no user "nobody".\n' });
  });

  it('adds agent and user tokens, lists them without secrets, and revokes one exactly once', async () => {
    const agent = await swarm('tokens', 'add', '--agent', 'data_cleaner', '--name', 'cleaner ci');
    expect(agent.code).toBe(0);
    expect(agent.stderr).toBe('');
    const agentToken = (agent.stdout.match(TOKEN) ?? [])[0]!;
    expect(await app.auth.principalForToken(agentToken)).toEqual({ kind: 'agent', id: 'data_cleaner', role: 'viewer', agent: 'data_cleaner', scopes: ['decide'] });

    const unknownAgent = await swarm('tokens', 'add', '--agent', 'ghost');
    expect(unknownAgent.code).toBe(0);
    expect(unknownAgent.stderr).toBe(`note: agent "ghost" is not in ${join(dir, 'agents.yaml')}; its calls are denied until it is added there.\n`);

    const forUser = await swarm('tokens', 'add', '--user', 'victor', '--name', 'victor dashboards');
    expect(forUser.code).toBe(0);
    expect(forUser.stdout).toContain('API token for user "victor" (viewer):');
    const noUser = await swarm('tokens', 'add', '--user', 'nobody');
    expect(noUser).toEqual({ code: 1, stdout: '', stderr: 'error: there is no user "nobody".\n' });

    const list = await swarm('tokens', 'list');
    expect(list.code).toBe(0);
    const lines = list.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+OWNER\s+SCOPES\s+CREATED \(UTC\)\s+EXPIRES \(UTC\)\s+LAST USED \(UTC\)\s+STATE$/);
    expect(lines.find((l) => l.includes('cleaner ci'))).toMatch(/agent data_cleaner\s+decide\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+.*active$/);
    expect(lines.find((l) => l.includes('victor dashboards'))).toContain('user victor');
    expect(lines.find((l) => l.includes('alice laptop'))).toContain('user alice');
    expect(list.stdout).not.toMatch(TOKEN);

    const [{ id }] = (await rows<{ id: number }>("SELECT id FROM api_tokens WHERE name = 'cleaner ci'")) as [{ id: number }];
    const revoke = await swarm('tokens', 'revoke', String(id));
    expect(revoke).toEqual({ code: 0, stdout: `Revoked token ${id} (cleaner ci): it no longer authenticates.\n`, stderr: '' });
    expect(await app.auth.principalForToken(agentToken)).toBeUndefined();
    const again = await swarm('tokens', 'revoke', String(id));
    expect(again).toEqual({ code: 1, stdout: '', stderr: `error: Token ${id} was revoked already.\n` });
    const unknown = await swarm('tokens', 'revoke', '999999');
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'error: There is no token 999999.\n' });
    expect((await events('token.revoked')).filter((e) => e.target === String(id))).toHaveLength(1);

    // A rotation on PostgreSQL: the new token works at once, the old one for the overlap (here none).
    const [{ id: victorId }] = (await rows<{ id: number }>("SELECT id FROM api_tokens WHERE name = 'victor dashboards'")) as [{ id: number }];
    const rotated = await swarm('tokens', 'rotate', String(victorId), '--overlap', '0s');
    expect(rotated.code).toBe(0);
    const next = (rotated.stdout.match(TOKEN) ?? [])[0]!;
    expect(await app.auth.principalForToken(next)).toEqual({ kind: 'user', id: 'victor', role: 'viewer', scopes: ['read'] });
    expect((await events('token.rotated')).filter((e) => (JSON.parse(e.detailJson ?? '{}') as { old_id?: number }).old_id === Number(victorId))).toHaveLength(1);

    const listed = await swarm('tokens', 'list');
    expect(listed.stdout.split('\n').find((l) => l.includes('cleaner ci'))).toMatch(/\s+revoked$/);
  });

  it('says that a database without an enabled admin has none yet', async () => {
    const database = await postgres.freshDatabase('noadmin');
    let noted = '';
    const r = await run(
      { io: { out: () => {}, err: (t) => void (noted += t) }, env: { ...env, SWARM_DB: postgres.cluster.urlOf(database) } },
      ['users', 'add', 'first', '--role', 'viewer'],
    );
    expect(r).toBe(0);
    expect(noted).toBe('note: this database has no enabled admin yet; add one with: swarm users add NAME --role admin\n');
  });
});

describe('swarm features on PostgreSQL', () => {
  it('lists every flag with tier, value and layer, and as JSON', async () => {
    const r = await swarm('features', 'list');
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').find((l) => l.startsWith('audit_trail_security_events '))).toMatch(/^audit_trail_security_events\s+invariant\s+on\s+default\s+\S/);
    expect(r.stdout).toMatch(/^external_web_access\s+flag\s+off\s+default/m);
    const json = await swarm('features', 'list', '--json');
    const body = JSON.parse(json.stdout) as { flags: { name: string; value: boolean; last_change: unknown }[]; problems: unknown[] };
    expect(body.flags.find((f) => f.name === 'cron_scheduler')).toMatchObject({ value: true, last_change: null });
  });

  it('sets and unsets an override attributed to --as: the row, the history and the security events', async () => {
    const set = await swarm('features', 'set', 'cron_scheduler', 'off', '--reason', 'maintenance window', '--as', 'root');
    expect(set).toEqual({ code: 0, stdout: 'cron_scheduler is now off (runtime override by root).\n', stderr: '' });
    expect(await rows('SELECT value, set_by, reason FROM flag_overrides WHERE name = $1', ['cron_scheduler'])).toEqual([{ value: false, set_by: 'root', reason: 'maintenance window' }]);
    const [changed] = await events('flag.changed');
    expect(changed).toMatchObject({ actor: 'root', actorRole: 'admin', outcome: 'succeeded', target: 'cron_scheduler' });
    expect(JSON.parse(changed!.detailJson!)).toMatchObject({ action: 'set', old_value: true, new_value: false, layer: 'override', reason: 'maintenance window' });

    const listed = await swarm('features', 'list');
    expect(listed.stdout).toMatch(/^cron_scheduler\s+\S+\s+off\s+override by root\s/m);
    const json = JSON.parse((await swarm('features', 'list', '--json')).stdout) as { flags: { name: string; last_change: { changed_by?: string } | null }[] };
    expect(json.flags.find((f) => f.name === 'cron_scheduler')?.last_change).not.toBeNull();

    const unset = await swarm('features', 'unset', 'cron_scheduler', '--reason', 'window over', '--as', 'root');
    expect(unset).toEqual({ code: 0, stdout: 'cron_scheduler: override removed by root; it is now on (from default).\n', stderr: '' });
    expect(await rows('SELECT 1 FROM flag_overrides WHERE name = $1', ['cron_scheduler'])).toHaveLength(0);
    expect((await app.flags.history({ name: 'cron_scheduler' })).map((h) => [h.action, h.changedBy])).toEqual([
      ['unset', 'root'],
      ['set', 'root'],
    ]);
  });

  it('refuses to turn an invariant off (exit 1), recorded as flag.refused', async () => {
    const r = await swarm('features', 'set', 'audit_trail_security_events', 'off', '--reason', 'too noisy', '--as', 'root');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: .*invariant/);
    expect(await rows('SELECT 1 FROM flag_overrides WHERE name = $1', ['audit_trail_security_events'])).toHaveLength(0);
    const [refused] = await events('flag.refused');
    expect(refused).toMatchObject({ actor: 'root', actorRole: 'admin', outcome: 'refused', target: 'audit_trail_security_events' });
    expect(refused!.detailJson).toContain('is an invariant');
  });

  it('decides --as through the engine like PUT /api/v1/flags/{name}: a viewer is refused and the refusal is a denial', async () => {
    const r = await swarm('flags', 'set', 'batch_runner', 'off', '--reason', 'cost', '--as', 'victor');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error: refused for user "victor" (viewer) by rbac:admin');
    expect(await rows('SELECT 1 FROM flag_overrides WHERE name = $1', ['batch_runner'])).toHaveLength(0);
    const { rows: denied } = await app.denials.query({ ruleSource: 'rbac:admin', limit: 5 });
    expect(denied[0]).toMatchObject({ principal: 'victor', httpMethod: 'PUT', httpPath: '/api/v1/flags/batch_runner' });

    const nobody = await swarm('features', 'set', 'batch_runner', 'off', '--reason', 'cost', '--as', 'nobody');
    expect(nobody).toEqual({ code: 1, stdout: '', stderr: 'error: there is no user "nobody" (--as must name an existing user).\n' });
  });
});

describe('swarm approvals on PostgreSQL', () => {
  it('approves and rejects as an operator; a second decision is a conflict', async () => {
    const approve = await swarm('approvals', 'approve', approvalIds.a, '--as', 'olivia', '--reason', 'change ticket 42');
    expect(approve).toEqual({ code: 0, stdout: `Approved ${approvalIds.a}: deploy_serving for agent deployer (gate deploy), by olivia.\n`, stderr: '' });
    expect(await app.approvals.get(approvalIds.a)).toMatchObject({ status: 'approved', decidedBy: 'olivia', decisionReason: 'change ticket 42' });
    const reject = await swarm('approvals', 'reject', approvalIds.b, '--as', 'root', '--reason', 'not during the freeze');
    expect(reject.code).toBe(0);
    expect(reject.stdout).toBe(`Rejected ${approvalIds.b}: deploy_serving for agent deployer (gate deploy), by root.\nThe rejection is recorded as a denial.\n`);
    expect(await app.approvals.get(approvalIds.b)).toMatchObject({ status: 'rejected', decidedBy: 'root' });
    const { rows: gateDenials } = await app.denials.query({ ruleSource: 'hitl:deploy', agent: 'deployer', limit: 10 });
    expect(gateDenials.some((d) => d.reason === 'Rejected by root: not during the freeze')).toBe(true);

    const again = await swarm('approvals', 'approve', approvalIds.a, '--as', 'root');
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('error: This request is already approved (by olivia).\n');
    expect((await events('approval.approved')).filter((e) => e.target === approvalIds.a)).toHaveLength(1);
    expect((await events('approval.rejected')).filter((e) => e.target === approvalIds.b)).toHaveLength(1);
  });

  it('decides a request once when two people decide it at the same moment', async () => {
    const both = await Promise.all([
      swarm('approvals', 'approve', approvalIds.d, '--as', 'olivia'),
      swarm('approvals', 'reject', approvalIds.d, '--as', 'root', '--reason', 'no'),
    ]);
    expect(both.map((r) => r.code).sort()).toEqual([0, 1]);
    const loser = both.find((r) => r.code === 1)!;
    expect(loser.stderr).toMatch(/^error: This request is already (approved \(by olivia\)|rejected \(by root\))\.\n$/);
    const row = await app.approvals.get(approvalIds.d);
    expect(['approved', 'rejected']).toContain(row?.status);
    const decided = [...(await events('approval.approved')), ...(await events('approval.rejected'))].filter((e) => e.target === approvalIds.d);
    expect(decided).toHaveLength(1);
  });

  it('refuses a decider who is not an operator or admin (a recorded denial), and lists what is pending', async () => {
    const r = await swarm('approvals', 'approve', approvalIds.c, '--as', 'victor');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('refused for user "victor" (viewer) by rbac:operator');
    expect((await app.approvals.get(approvalIds.c))?.status).toBe('pending');
    const { rows: denied } = await app.denials.query({ ruleSource: 'rbac:operator', limit: 5 });
    expect(denied.some((d) => d.principal === 'victor' && d.httpPath === `/api/v1/approvals/${approvalIds.c}/approve`)).toBe(true);

    const list = await swarm('approvals', 'list', '--status', 'pending', '--json');
    expect(list.code).toBe(0);
    const body = JSON.parse(list.stdout) as { approvals: { id: string; arguments: Record<string, unknown> }[] };
    expect(body.approvals.map((a) => a.id)).toEqual([approvalIds.c]);
    expect(body.approvals[0]!.arguments).toEqual({ model: 'churn-v7', env: 'canary' });

    const table = await swarm('approvals', 'list');
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+GATE\s+AGENT\s+TOOL\s+REQUESTED \(UTC\)\s+EXPIRES \(UTC\)\s+DECIDED BY\s+REASON$/);
    expect(lines.find((l) => l.startsWith(approvalIds.a))).toMatch(/approved\s+deploy\s+deployer\s+deploy_serving\s.*olivia\s+change ticket 42$/);
    expect(await swarm('approvals', 'list', '--agent', 'nobody')).toEqual({ code: 0, stdout: 'No approvals match.\n', stderr: '' });
  });
});

describe('swarm denials on PostgreSQL', () => {
  it('filters by agent and rule-source family, as an aligned table, and records the read', async () => {
    const r = await swarm('denials', '--agent', 'deployer', '--rule-source', 'policy');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+TIME \(UTC\)\s+AGENT\s+TOOL\s+RULE_SOURCE\s+ROLE\s+REASON$/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('policy:no-friday-deploys');
    expect(lines[1]!.indexOf('No production')).toBe(lines[0]!.indexOf('REASON'));
    const read = (await events('audit.queried')).find((e) => e.actor === ME && e.detailJson?.includes('"ruleSource":"policy"'));
    expect(read).toMatchObject({ outcome: 'succeeded', target: 'permission_denials' });

    expect(await swarm('denials', '--agent', 'nobody')).toEqual({ code: 0, stdout: 'No denials match.\n', stderr: '' });
  });

  it('prints one page as JSON with a cursor', async () => {
    const first = await swarm('denials', '--json', '--since', '3600', '--tool', 'deploy_serving', '--limit', '1');
    expect(first.code).toBe(0);
    const page = JSON.parse(first.stdout) as { denials: { id: number; rule_source: string; reason: string }[]; next_cursor: string | null };
    expect(page.denials).toHaveLength(1);
    expect(page.next_cursor).toBe(String(page.denials[0]!.id));
    const rest = JSON.parse((await swarm('denials', '--json', '--since', '3600', '--tool', 'deploy_serving', '--cursor', page.next_cursor!)).stdout) as typeof page;
    // the first page and the rest: every matching row once, newest first (the seeded two and the rejections above)
    const all = await rows<{ id: number }>('SELECT id FROM permission_denials WHERE tool_name = $1 AND timestamp >= $2 ORDER BY id DESC', ['deploy_serving', Date.now() / 1000 - 3600]);
    expect([...page.denials, ...rest.denials].map((d) => d.id)).toEqual(all.map((r) => r.id));
    expect(rest.denials.map((d) => d.rule_source)).toContain('policy:no-friday-deploys');
    expect(rest.next_cursor).toBeNull();
  });

  it('exports every matching row as CSV, quoted and formula-safe, recorded as an export', async () => {
    const exportsBefore = (await events('audit.exported')).length;
    const r = await swarm('denials', '--csv', '--since', '86400');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\r\n').filter(Boolean);
    expect(lines[0]).toBe('id,timestamp,timestamp_iso,tool_call_id,tool_name,agent_name,arguments_json,rule_source,reason,user_role,http_method,http_path,principal,decision_id,policy_revision');
    const seeded = lines.slice(1).filter((l) => /,(deployer|compliance_agent|trainer),/.test(l));
    expect(seeded.length).toBeGreaterThanOrEqual(3);
    expect(r.stdout).toContain(`"'=HYPERLINK(""http://x"") formula, with ""quotes"""`);
    expect(r.stdout).not.toContain('trainer may not call');
    // every row of the table within the day, newest first
    const [{ n }] = (await rows<{ n: number }>('SELECT count(*)::int AS n FROM permission_denials WHERE timestamp >= $1', [Date.now() / 1000 - 86400])) as [{ n: number }];
    expect(lines).toHaveLength(n + 1);
    const ids = lines.slice(1).map((l) => Number(l.split(',')[0]));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const exported = await events('audit.exported');
    expect(exported).toHaveLength(exportsBefore + 1);
    expect(exported[0]).toMatchObject({ actor: ME, target: 'permission_denials' });
    expect(JSON.parse(exported[0]!.detailJson!)).toMatchObject({ format: 'csv' });
  });
});

describe('the CLI process on PostgreSQL', () => {
  it('runs as the swarm command and exits when done (the pool and the flag listener closed)', async () => {
    // The real binary in a child process: what is checked is that the process ends by itself.
    const r = await runSwarmBinary(['tokens', 'list'], env, { timeoutMs: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('alice laptop');
  }, 70_000);

  it('names a PostgreSQL database it cannot reach, without its password; SQLite-only commands say what runs there', async () => {
    const unreachable = { ...env, SWARM_DB: 'postgres://app:pw@127.0.0.1:1/swarm' };
    let stderr = '';
    const code = await run({ io: { out: () => {}, err: (t) => void (stderr += t) }, env: unreachable }, ['tokens', 'list']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: PostgreSQL at postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/swarm is not available \(ECONNREFUSED/);

    stderr = '';
    const refused = await run({ io: { out: () => {}, err: (t) => void (stderr += t) }, env: unreachable }, ['db', 'backup', join(dir, 'never.db')]);
    expect(refused).toBe(1);
    expect(stderr).toContain(`On PostgreSQL this version runs ${POSTGRES_COMMANDS};`);
    expect(stderr).not.toContain('app:pw');
  });
});
