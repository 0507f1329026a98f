/**
 * The `swarm` CLI end to end: each test runs the CLI's own entry in process (lib/test-support/cli.ts) against a real
 * SQLite file in a temp directory, and checks the result through the same database with the production stores; the
 * exit statuses of the real binary (node bin/swarm.mjs) in a child process once. No mocks.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWorkspace, runSwarm, runSwarmBinary, type CliResult } from '@/lib/test-support/cli';
import { createApp, type SqliteApp } from '@/lib/app';


let dir: string;
let dbPath: string;
let app: SqliteApp;
let env: NodeJS.ProcessEnv;
const approvalIds: Record<'a' | 'b' | 'c', string> = { a: '', b: '', c: '' };

/** Run the CLI in process: its exit status and what it printed. */
function swarm(...args: string[]): Promise<CliResult> {
  return runSwarm(args, env);
}

const TOKEN = /swt_[A-Za-z0-9_-]+/g;

beforeAll(async () => {
  ({ dir, dbPath, env } = cliWorkspace('swarm-cli-', 'cli.db'));

  app = createApp({ dbPath, configDir: dir, env: {}, watchConfig: false });
  await app.auth.createUser('root', 'admin');
  await app.auth.createUser('olivia', 'operator');
  await app.auth.createUser('victor', 'viewer');

  const now = Date.now() / 1000;
  const denial = (toolName: string, agentName: string, ruleSource: string, reason: string, ageSeconds: number) =>
    app.recorder.appendDenial({ toolName, agentName, ruleSource, reason, userRole: 'viewer', principal: `agent:${agentName}`, timestamp: now - ageSeconds });
  denial('deploy_serving', 'deployer', 'policy:no-friday-deploys', 'No production deployments before the weekend.', 60);
  denial('deploy_serving', 'deployer', 'hitl:deploy', `Waiting for an operator, ${'very '.repeat(30)}long reason`, 120);
  denial('export_raw_data', 'compliance_agent', 'flag:raw_data_export', '=HYPERLINK("http://x") formula, with "quotes"', 30);
  denial('clean_dataset', 'trainer', 'agent_allowlist', 'trainer may not call clean_dataset', 2 * 24 * 3600);

  const request = async (target: string) =>
    (await app.approvals.request({
      gate: 'deploy',
      agent: 'deployer',
      tool: 'deploy_serving',
      arguments: { model: 'churn-v7', env: target },
      requestedBy: 'agent:deployer',
      ruleSource: 'hitl:deploy',
      reason: 'Deployments wait for an operator.',
      expiresInSeconds: 3600,
    })).id;
  approvalIds.a = await request('prod');
  approvalIds.b = await request('staging');
  approvalIds.c = await request('canary');
});

afterAll(() => {
  app?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('swarm help and usage', () => {
  it('lists every command, and refuses an unknown one with exit 2 (the real binary, its exit status as a shell sees it)', async () => {
    const [help, unknown] = await Promise.all([runSwarmBinary(['help'], env), runSwarmBinary(['frobnicate'], env)]);
    expect(help.code).toBe(0);
    for (const c of ['users add', 'tokens add', 'denials', 'policy validate', 'features list', 'features set', 'features unset', 'approvals list', 'approvals approve', 'approvals reject']) {
      expect(help.stdout).toContain(`swarm ${c}`);
    }
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    expect(unknown.stderr).toContain('Usage: swarm');
    expect(unknown.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('swarm users and tokens', () => {
  it('creates a user and prints a working token once', async () => {
    const r = await swarm('users', 'add', 'alice', '--role', 'auditor', '--password', 'correct-horse-battery');
    expect(r.code).toBe(0);
    const tokens = r.stdout.match(TOKEN) ?? [];
    expect(tokens).toHaveLength(1);
    expect(r.stdout).toContain('will not be shown again');
    expect(await app.auth.principalForToken(tokens[0]!)).toEqual({ kind: 'user', id: 'alice', role: 'auditor', scopes: ['read'] });
    expect((await app.auth.verifyLogin('alice', 'correct-horse-battery'))?.username).toBe('alice');
  });

  it('refuses a user whose name is another\'s in other capitals (exit 1), and makes no token for it', async () => {
    const tokens = (await app.auth.listTokens()).length;
    const r = await swarm('users', 'add', 'OLIVIA', '--role', 'admin', '--password', 'a-second-olivia-1');
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr).toBe('error: User "OLIVIA" already exists as "olivia" (names are the same whatever the case of their letters).\n');
    expect(await app.auth.listTokens()).toHaveLength(tokens);
    expect((await app.auth.findUser('OLIVIA'))).toMatchObject({ username: 'olivia', role: 'operator' });
  });

  it('unlocks a user name a profile locked after failed sign-ins, recorded as auth.unlocked', async () => {
    const policy = { afterFailures: 2, lockSeconds: 1800 };
    const now = Date.now() / 1000;
    for (let i = 0; i < 2; i++) {
      await app.loginAttempts.start('user:victor', [], now, policy);
      await app.loginAttempts.failed('user:victor', [], now, policy);
    }
    expect(await app.loginAttempts.start('user:victor', [], now + 1, policy)).toMatchObject({ kind: 'locked' });
    const r = await swarm('users', 'unlock', 'victor');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('User name "victor" is unlocked; its failed sign-ins are forgotten.\n');
    expect(await app.loginAttempts.start('user:victor', [], now + 2, policy)).toEqual({ kind: 'go', failures: 0, delayMs: 0 });
    await app.loginAttempts.release('user:victor');
    expect((await app.securityEvents.ofType('auth.unlocked', 1))[0]).toMatchObject({ target: 'victor', outcome: 'succeeded', actor: expect.stringMatching(/^cli:/) });
  });

  it('creates an agent token that acts only as that agent', async () => {
    const r = await swarm('tokens', 'add', '--agent', 'data_cleaner');
    expect(r.code).toBe(0);
    const tokens = r.stdout.match(TOKEN) ?? [];
    expect(tokens).toHaveLength(1);
    expect(await app.auth.principalForToken(tokens[0]!)).toEqual({ kind: 'agent', id: 'data_cleaner', role: 'viewer', agent: 'data_cleaner', scopes: ['decide'] });
    expect(r.stdout).toContain('Scopes: decide. It does not expire.');
  });

  it('gives a token a life and a scope within the role, lists them, and rotates a token with an overlap', async () => {
    const r = await swarm('tokens', 'add', '--user', 'olivia', '--scopes', 'read', '--expires', '30d', '--name', 'olivia ci');
    expect(r.code).toBe(0);
    const [token] = r.stdout.match(TOKEN) ?? [];
    expect(r.stdout).toMatch(/Scopes: read\. It expires \d{4}-\d\d-\d\dT/);
    expect(await app.auth.principalForToken(token!)).toEqual({ kind: 'user', id: 'olivia', role: 'operator', scopes: ['read'] });
    const above = await swarm('tokens', 'add', '--user', 'victor', '--scopes', 'admin');
    expect(above.code).not.toBe(0);
    expect(above.stderr).toContain('above what role "viewer" allows');
    expect((await swarm('tokens', 'add', '--agent', 'trainer', '--expires', 'soon')).stderr).toContain('--expires is a duration');
    const listed = await swarm('tokens', 'list');
    expect(listed.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+OWNER\s+SCOPES\s+CREATED \(UTC\)\s+EXPIRES \(UTC\)\s+LAST USED \(UTC\)\s+STATE$/);
    const row = listed.stdout.split('\n').find((l) => l.includes('olivia ci'))!;
    expect(row).toMatch(/user olivia\s+read\s+/);
    expect(row).toMatch(/active$/);
    const id = (await app.auth.listTokens()).find((t) => t.name === 'olivia ci')!.id;
    const rotated = await swarm('tokens', 'rotate', String(id), '--overlap', '2h');
    expect(rotated.code).toBe(0);
    const [next] = rotated.stdout.match(TOKEN) ?? [];
    expect(rotated.stdout).toContain(`replacing token ${id}`);
    expect(await app.auth.principalForToken(next!)).toEqual({ kind: 'user', id: 'olivia', role: 'operator', scopes: ['read'] });
    // both work during the overlap; the old one expires in two hours
    expect((await app.auth.principalForToken(token!))?.id).toBe('olivia');
    const old = (await app.auth.listTokens()).find((t) => t.id === id)!;
    expect(old.expiresAt! - Date.now() / 1000).toBeGreaterThan(7_100);
    expect(old.expiresAt! - Date.now() / 1000).toBeLessThanOrEqual(7_200);
    expect((await app.securityEvents.ofType('token.rotated', 1))[0]).toMatchObject({ actor: expect.stringMatching(/^cli:/) });
  });
});

describe('swarm denials', () => {
  it('filters by agent and rule-source family, as an aligned table with UTC times', async () => {
    const [r, none] = await Promise.all([swarm('denials', '--agent', 'deployer', '--rule-source', 'policy'), swarm('denials', '--agent', 'nobody')]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+TIME \(UTC\)\s+AGENT\s+TOOL\s+RULE_SOURCE\s+ROLE\s+REASON$/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('policy:no-friday-deploys');
    expect(lines[1]).toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/);
    // the REASON column starts where its header starts
    expect(lines[1]!.indexOf('No production')).toBe(lines[0]!.indexOf('REASON'));

    expect(none.code).toBe(0);
    expect(none.stdout.trim()).toBe('No denials match.');
  });

  it('prints one page as JSON with a cursor, honouring --since and --tool', async () => {
    const first = await swarm('denials', '--json', '--since', '3600', '--tool', 'deploy_serving', '--limit', '1');
    expect(first.code).toBe(0);
    const page = JSON.parse(first.stdout) as { denials: { id: number; rule_source: string; reason: string }[]; next_cursor: string | null };
    expect(page.denials).toHaveLength(1);
    expect(page.denials[0]!.rule_source).toBe('hitl:deploy');
    expect(page.next_cursor).toBe(String(page.denials[0]!.id));
    // the long reason is whole in JSON (only the table truncates)
    expect(page.denials[0]!.reason).toMatch(/long reason$/);

    const rest = JSON.parse((await swarm('denials', '--json', '--since', '3600', '--tool', 'deploy_serving', '--cursor', page.next_cursor!)).stdout) as typeof page;
    expect(rest.denials.map((d) => d.rule_source)).toEqual(['policy:no-friday-deploys']);
    expect(rest.next_cursor).toBeNull();
  });

  it('exports every matching row as CSV, quoted and formula-safe', async () => {
    const r = await swarm('denials', '--csv', '--since', '86400');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\r\n').filter(Boolean);
    expect(lines[0]).toBe('id,timestamp,timestamp_iso,tool_call_id,tool_name,agent_name,arguments_json,rule_source,reason,user_role,http_method,http_path,principal,decision_id,policy_revision');
    // three seeded rows are within a day; the two-day-old one is not
    const seeded = lines.slice(1).filter((l) => /,(deployer|compliance_agent|trainer),/.test(l));
    expect(seeded).toHaveLength(3);
    expect(r.stdout).toContain(`"'=HYPERLINK(""http://x"") formula, with ""quotes"""`);
    expect(r.stdout).not.toContain('trainer may not call');
  });

  it('rejects invalid filters with every problem and exit 2', async () => {
    const r = await swarm('denials', '--since=-5', '--role', 'boss', '--limit', '0');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--since:');
    expect(r.stderr).toContain('--role:');
    expect(r.stderr).toContain('--limit:');
    expect(r.stdout).toBe('');
  });
});

describe('swarm policy validate', () => {
  it('accepts a valid file and reports a broken one as file:line:column, exit 1', async () => {
    const good = join(dir, 'good.yaml');
    writeFileSync(
      good,
      'rules:\n  - id: no-friday-deploys\n    decision: DENY\n    match: { tool: deploy_serving, arguments: { env: prod } }\n  - id: ask-exports\n    decision: ASK\n    match: { tool: export_raw_data }\n',
    );
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'rules:\n  - id: no-friday-deploys\n    decision: MAYBE\n    match: { tool: deploy_serving }\n');
    const [ok, r, missing] = await Promise.all([
      swarm('policy', 'validate', good),
      swarm('policy', 'validate', bad),
      swarm('policy', 'validate', join(dir, 'nope.yaml')),
    ]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^OK: 2 rules/);

    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${bad}:3:15: rules.0.decision: decision must be ALLOW, DENY or ASK`);
    expect(r.stderr).not.toMatch(/\n\s+at /);

    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no such file');
  });
});

describe('swarm features', () => {
  it('lists every flag with tier, value and layer', async () => {
    const r = await swarm('features', 'list');
    expect(r.code).toBe(0);
    const row = r.stdout.split('\n').find((l) => l.startsWith('audit_trail_security_events '));
    expect(row).toMatch(/^audit_trail_security_events\s+invariant\s+on\s+default\s+\S/);
    expect(r.stdout).toMatch(/^external_web_access\s+flag\s+off\s+default/m);
  });

  it('refuses to turn an invariant off (exit 1), and records the attempt as a security event', async () => {
    const r = await swarm('features', 'set', 'audit_trail_security_events', 'off', '--reason', 'too noisy', '--as', 'root');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: .*invariant/);
    await app.flags.invalidate();
    expect(app.flags.get('audit_trail_security_events')).toMatchObject({ value: true, layer: 'default' });
    const [refused] = await app.securityEvents.ofType('flag.refused');
    expect(refused).toMatchObject({ actor: 'root', actorRole: 'admin', outcome: 'refused', target: 'audit_trail_security_events' });
    expect(refused!.detailJson).toContain('is an invariant');
  });

  it('sets and unsets an override attributed to --as, with the change history', async () => {
    const set = await swarm('features', 'set', 'cron_scheduler', 'off', '--reason', 'maintenance window', '--as', 'root');
    expect(set.code).toBe(0);
    await app.flags.invalidate();
    expect(app.flags.get('cron_scheduler')).toMatchObject({ value: false, layer: 'override', override: { setBy: 'root', reason: 'maintenance window' } });

    const unset = await swarm('features', 'unset', 'cron_scheduler', '--reason', 'window over', '--as', 'root');
    expect(unset.code).toBe(0);
    await app.flags.invalidate();
    expect(app.flags.get('cron_scheduler')).toMatchObject({ value: true, layer: 'default' });
    expect((await app.flags.history({ name: 'cron_scheduler' })).map((h) => [h.action, h.changedBy])).toEqual([
      ['unset', 'root'],
      ['set', 'root'],
    ]);
  });
});

describe('swarm approvals', () => {
  it('approves and rejects as an operator; a second decision is a conflict', async () => {
    const [approve, reject] = await Promise.all([
      swarm('approvals', 'approve', approvalIds.a, '--as', 'olivia', '--reason', 'change ticket 42'),
      swarm('approvals', 'reject', approvalIds.b, '--as', 'root', '--reason', 'not during the freeze'),
    ]);
    expect(approve.code).toBe(0);
    expect(await app.approvals.get(approvalIds.a)).toMatchObject({ status: 'approved', decidedBy: 'olivia', decisionReason: 'change ticket 42' });
    expect(reject.code).toBe(0);
    expect(await app.approvals.get(approvalIds.b)).toMatchObject({ status: 'rejected', decidedBy: 'root' });
    // a rejection is a denial, attributed to the gate
    expect((await app.denials.query({ ruleSource: 'hitl:deploy', agent: 'deployer', limit: 10 })).rows.some((d) => d.reason === 'Rejected by root: not during the freeze')).toBe(true);

    const again = await swarm('approvals', 'approve', approvalIds.a, '--as', 'root');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('error: This request is already approved (by olivia).');
    expect(again.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses a decider who is not an operator or admin, and lists what is pending', async () => {
    const r = await swarm('approvals', 'approve', approvalIds.c, '--as', 'victor');
    expect(r.code).toBe(1);
    // checked by the engine like POST /api/v1/approvals/{id}/approve, and the refusal is a recorded denial
    expect(r.stderr).toContain('refused for user "victor" (viewer) by rbac:operator');
    expect((await app.approvals.get(approvalIds.c))?.status).toBe('pending');
    const denied = (await app.denials.query({ ruleSource: 'rbac:operator', limit: 5 })).rows;
    expect(denied.some((d) => d.principal === 'victor' && d.httpPath === `/api/v1/approvals/${approvalIds.c}/approve`)).toBe(true);

    const list = await swarm('approvals', 'list', '--status', 'pending', '--json');
    expect(list.code).toBe(0);
    const body = JSON.parse(list.stdout) as { approvals: { id: string; arguments: Record<string, unknown> }[] };
    expect(body.approvals.map((a) => a.id)).toEqual([approvalIds.c]);
    expect(body.approvals[0]!.arguments).toEqual({ model: 'churn-v7', env: 'canary' });
  });
});

describe('the CLI decides through the engine', () => {
  it('refuses a flag change that a YAML rule refuses on the REST route, and records it', async () => {
    writeFileSync(
      join(dir, 'permission_policies.yaml'),
      'rules:\n  - id: freeze\n    decision: DENY\n    reason: Change freeze.\n    match: { method: PUT, path: /api/v1/flags/* }\n',
    );
    try {
      const r = await swarm('features', 'set', 'batch_runner', 'off', '--reason', 'cost', '--as', 'root');
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('by policy:freeze: Change freeze.');
      await app.flags.invalidate();
      expect(app.flags.get('batch_runner')?.layer).toBe('default');
      expect((await app.denials.query({ ruleSource: 'policy:freeze', limit: 5 })).rows[0]).toMatchObject({ principal: 'root', httpMethod: 'PUT', httpPath: '/api/v1/flags/batch_runner' });
    } finally {
      writeFileSync(join(dir, 'permission_policies.yaml'), 'rules: []\n');
    }
  });

  it('needs --as for a flag change: the change is checked for a person, not for the machine account', async () => {
    const r = await swarm('features', 'set', 'batch_runner', 'off', '--reason', 'cost');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--as');
  });
});

describe('swarm policy test', () => {
  const write = (name: string, text: string) => {
    const f = join(dir, name);
    writeFileSync(f, text);
    return f;
  };

  it('prints each case and exits 0 when all pass, 4 when one fails', async () => {
    const good = write(
      'good.test.yaml',
      'tests:\n  - name: deploys ask\n    input: { agent: deployer, tool: deploy_serving, args: { model_id: m, env: prod } }\n    expect: { decision: ASK, rule_source: hitl:deploy }\n',
    );
    const bad = write(
      'bad.test.yaml',
      'tests:\n  - name: deploys ask\n    input: { agent: deployer, tool: deploy_serving, args: { model_id: m, env: prod } }\n    expect: { decision: ASK }\n  - name: wrong on purpose\n    input: { agent: deployer, tool: deploy_serving, args: { model_id: m, env: prod } }\n    expect: { decision: ALLOW }\n',
    );
    const [ok, failed] = await Promise.all([swarm('policy', 'test', good), swarm('policy', 'test', bad)]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('PASS  deploys ask  (ASK hitl:deploy)');
    expect(ok.stdout).toContain('1 passed, 0 failed');
    expect(failed.code).toBe(4);
    expect(failed.stdout).toContain(`FAIL  wrong on purpose\n      ${bad}:5:5: policy test "wrong on purpose" failed: expected ALLOW, got ASK hitl:deploy`);
    expect(failed.stdout).toContain('1 passed, 1 failed');
  });

  it('exits 3 when the configuration does not compile', async () => {
    const tests = write('t.test.yaml', 'tests: []\n');
    write('gates.yaml', 'gates:\n  - id: x\n    tools: [a]\n    when: "args.x =="\n');
    try {
      const r = await swarm('policy', 'test', tests);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/gates\.yaml:4:11: gates\.0\.when: invalid condition/);
    } finally {
      rmSync(join(dir, 'gates.yaml'));
    }
  });
});

describe('swarm policy validate warnings', () => {
  it('warns about a shadowed rule and a DENY outvoted by an ALLOW, with both positions', async () => {
    const f = join(dir, 'shadow.yaml');
    writeFileSync(
      f,
      [
        'rules:',
        '  - { id: all-exports, decision: DENY, priority: 700, match: { tool: export_* } }',
        '  - { id: one-export, decision: ALLOW, match: { tool: export_raw_data, agent: compliance_agent } }',
        '  - { id: open, decision: ALLOW, match: { tool: train_model } }',
        '  - { id: closed, decision: DENY, match: { tool: train_model } }',
        '',
      ].join('\n'),
    );
    const r = await swarm('policy', 'validate', f);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`${f}:3:5: warning: rule "one-export" can never decide: rule "all-exports" (${f}:2:5) has a higher priority (700 > 500)`);
    expect(r.stderr).toContain(`${f}:5:5: warning: rule "closed" (DENY) can never decide: rule "open" (${f}:4:5) has the same priority`);
    expect(r.stderr).not.toContain('"open" can never');
  });
});

describe('swarm audit', () => {
  it('verifies the live trail (exit 0, counts, recorded), and a tampered copy fails naming the table, row and problem', async () => {
    const { copyFileSync } = await import('node:fs');
    const Database = (await import('better-sqlite3')).default;
    app.engine.decide({ kind: 'tool', principal: { kind: 'agent', id: 'trainer', role: 'viewer', agent: 'trainer' }, agent: 'trainer', tool: 'deploy_serving', arguments: {} });
    app.checkpointAudit();
    const ok = await swarm('audit', 'verify');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^permission_denials: \d+ rows checked .*1\/1 checkpoint valid/m);
    expect(ok.stdout).toContain('Intact: every row matches its hash chain and every checkpoint.');
    expect((await app.securityEvents.ofType('audit.verified', 1))[0]).toMatchObject({ outcome: 'succeeded' });
    const ranged = await swarm('audit', 'verify', '--from', '2020-01-01', '--to', '2020-12-31');
    expect(ranged.code).toBe(0);
    expect(ranged.stdout).toContain('Requested: 2020-01-01T00:00:00Z to 2020-12-31T00:00:00Z; found permission_denials 0 rows, security_events 0 rows.');

    app.db.$client.pragma('wal_checkpoint(TRUNCATE)');
    const copy = join(dir, 'tampered.db');
    copyFileSync(dbPath, copy);
    const raw = new Database(copy);
    raw.exec('DROP TRIGGER permission_denials_no_update');
    raw.prepare("UPDATE permission_denials SET reason = 'nothing happened' WHERE id = 2").run();
    raw.close();
    const bad = await swarm('audit', 'verify', '--db', copy, '--public-key', join(dir, 'audit-signing-key.pub'));
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('FAILED permission_denials at row 2: changed: row 2 was changed after it was written');
  });

  it('prints the verifier key and the latest checkpoints in the C2SP signed-note format', async () => {
    const [key, cp] = await Promise.all([swarm('audit', 'key'), swarm('audit', 'checkpoint')]);
    expect(key.stdout.trim()).toMatch(/^swarm-permissions\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    expect(cp.code).toBe(0);
    expect(cp.stdout).toMatch(/swarm-permissions\/permission_denials\n\d+\n[A-Za-z0-9+/]{43}=\ntime \d+\n\n\u2014 swarm-permissions [A-Za-z0-9+/=]+\n/);
  });

  it('explains a recorded denial by its decision id', async () => {
    const r = app.engine.decide({ kind: 'tool', principal: { kind: 'agent', id: 'trainer', role: 'viewer', agent: 'trainer' }, agent: 'trainer', tool: 'export_raw_data', arguments: { dataset_id: 'd' } });
    const out = await swarm('audit', 'explain', r.decisionId!);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('Recorded:        DENY agent_allowlist');
    expect(out.stdout).toContain('Re-run then:     DENY agent_allowlist: the same as recorded');
    expect(out.stdout).toContain("Re-run today:    DENY agent_allowlist: today's policy decides the same");
    const unknown = await swarm('audit', 'explain', '01a20000-0000-7000-8000-000000000000');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No recorded decision has the id');
  });

  it('lists security events with filters, and records the read', async () => {
    const r = await swarm('audit', 'events', '--type', 'audit', '--json');
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout) as { events: { type: string }[] };
    expect(body.events.length).toBeGreaterThan(0);
    expect(body.events.every((e) => e.type.startsWith('audit.'))).toBe(true);
  });
});

