import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from './app';
import { sha256, verifyPassword } from './auth/secrets';
import { tempApp, type TempApp } from './test-support/temp-app';

let t: TempApp | undefined;
afterEach(() => {
  t?.cleanup();
  t = undefined;
});

describe('the start', () => {
  it('refuses SWARM_TRUSTED_PROXIES with an entry that is not an address or a CIDR, naming the entry', () => {
    // Checked before the database is opened (AppBase), so every process of the server stops on it: the start script,
    // the listener workers and Next.js.
    expect(() => createApp({ dbPath: '/nonexistent/never-opened.db', env: { SWARM_TRUSTED_PROXIES: '10.0.0.0/8, 10.0.0.0/33' } })).toThrow(
      'SWARM_TRUSTED_PROXIES: "10.0.0.0/33" is not an address or a CIDR',
    );
  });
});

describe('first start', () => {
  it('creates the admin once with a random password, shown only in the report', async () => {
    t = tempApp();
    const first = await t.app.bootstrap();
    expect(first.createdAdmin?.username).toBe('admin');
    expect(first.createdAdmin?.generated).toBe(true);
    expect(first.createdAdmin!.password.length).toBeGreaterThanOrEqual(12);
    const stored = (await t.app.auth.findUser('admin'))!;
    expect(stored.passwordHash).toMatch(/^scrypt\$/);
    expect(stored.passwordHash).not.toContain(first.createdAdmin!.password);
    expect(verifyPassword(first.createdAdmin!.password, stored.passwordHash!)).toBe(true);
    expect((await t.app.bootstrap()).createdAdmin).toBeUndefined();
  });

  it('still creates the admin when other users were added before the first start', async () => {
    t = tempApp();
    await t.app.auth.createUser('alex', 'auditor', 'auditor-password');
    expect((await t.app.bootstrap()).createdAdmin?.username).toBe('admin');
  });

  it('uses SWARM_ADMIN_PASSWORD and ensures SWARM_ADMIN_TOKEN as an admin token, stored hashed', async () => {
    t = tempApp({ env: { SWARM_ADMIN_PASSWORD: 'chosen-password', SWARM_ADMIN_TOKEN: 'script-token-0123456789' } });
    const r = await t.app.bootstrap();
    expect(r.createdAdmin?.generated).toBe(false);
    expect((await t.app.auth.verifyLogin('admin', 'chosen-password'))?.role).toBe('admin');
    expect(await t.app.auth.principalForToken('script-token-0123456789')).toMatchObject({ kind: 'user', id: 'admin', role: 'admin' });
    await t.app.bootstrap();
    const raw = new Database(t.dbPath, { readonly: true });
    try {
      const rows = raw.prepare('SELECT token_hash FROM api_tokens').all() as { token_hash: string }[];
      expect(rows).toHaveLength(1);
      expect(rows[0]!.token_hash).not.toContain('script-token');
    } finally {
      raw.close();
    }
  });
});

describe('sessions and tokens', () => {
  it('gives an agent token only its own agent, and a user token the user role', async () => {
    t = tempApp();
    await t.app.auth.createUser('olivia', 'operator', 'operator-password');
    const user = await t.app.auth.createToken({ username: 'olivia' }, 'x');
    const agent = await t.app.auth.createToken({ agent: 'deployer' }, 'x');
    expect(await t.app.auth.principalForToken(user)).toMatchObject({ kind: 'user', role: 'operator' });
    expect(await t.app.auth.principalForToken(agent)).toMatchObject({ kind: 'agent', agent: 'deployer' });
    expect(await t.app.auth.principalForToken('swt_unknown')).toBeUndefined();
  });

  it('ends a session on sign-out', async () => {
    t = tempApp();
    const u = await t.app.auth.createUser('olivia', 'operator', 'operator-password');
    const s = await t.app.auth.createSession(u.id);
    expect((await t.app.auth.principalForSession(s.token))?.id).toBe('olivia');
    await t.app.auth.deleteSession(s.token);
    expect(await t.app.auth.principalForSession(s.token)).toBeUndefined();
  });

  it('refuses short passwords and duplicate users with clear errors', async () => {
    t = tempApp();
    await expect(t.app.auth.createUser('a', 'viewer', 'short')).rejects.toThrow(/at least 8/);
    await t.app.auth.createUser('a', 'viewer', 'long-enough');
    await expect(t.app.auth.createUser('a', 'viewer', 'long-enough')).rejects.toThrow(/already exists/);
  });
});

describe('two processes on one database', () => {
  it('write denials, approvals and flag overrides at the same time without "database is locked"', async () => {
    t = tempApp();
    const other = createApp({ dbPath: t.dbPath, configDir: t.dir, env: {} });
    try {
      for (let i = 0; i < 200; i++) {
        t.app.recorder.appendDenial({ toolName: 'a', ruleSource: 'default', reason: String(i) });
        other.recorder.appendDenial({ toolName: 'b', ruleSource: 'default', reason: String(i) });
        if (i % 20 === 0) {
          await other.flags.setOverride('batch_runner', i % 40 !== 0, 'cli', 'test');
          await t.app.approvals.request({ gate: 'deploy', agent: 'deployer', tool: 'deploy_serving', arguments: { i }, requestedBy: 'x', ruleSource: 'hitl:deploy', reason: 'r', expiresInSeconds: 60 });
        }
      }
      expect(await t.app.denials.count()).toBe(400);
      // off, on (the override removed), off, ...: ten changes
      expect(await t.app.flags.history({ name: 'batch_runner' })).toHaveLength(10);
      expect(await other.approvals.list({ status: 'pending' })).toHaveLength(10);
    } finally {
      other.db.$client.close();
    }
  });
});

describe('credentials from before seals', () => {
  let t: TempApp | undefined;
  afterEach(() => t?.cleanup());

  it('are sealed at the first start that finds no record of it in the key folder, and never again', async () => {
    t = tempApp({ env: { SWARM_AUDIT_KEY_BESIDE_DB: '1' } });
    const raw = new Database(t.dbPath);
    try {
      // A database as a release before seals left it: a user and an agent token without a mac.
      raw.prepare("INSERT INTO users (username, role, password_hash, created_at) VALUES ('old-admin', 'admin', NULL, 1)").run();
      raw.prepare("INSERT INTO api_tokens (token_hash, name, agent_name, created_at, scopes) VALUES (?, 'old', 'deployer', 1, 'decide')").run(sha256('swt_from-an-older-release'));
      raw.prepare("INSERT INTO flag_overrides (name, value, set_by, set_at, reason) VALUES ('cron_scheduler', 0, 'admin', 1, 'maintenance')").run();
      expect(await t.app.auth.principalForToken('swt_from-an-older-release')).toBeUndefined();
      await t.app.bootstrap();
      expect(await t.app.auth.principalForToken('swt_from-an-older-release')).toMatchObject({ kind: 'agent', id: 'deployer' });
      expect(await t.app.auth.findUser('old-admin')).toMatchObject({ role: 'admin' });
      const sealed = raw.prepare("SELECT detail_json FROM security_events WHERE type = 'auth.sealed'").all() as { detail_json: string }[];
      // Sealed, then turned into the keyed form of its secret (the pepper): the bare SHA-256 is no longer stored.
      expect(sealed.map((e) => JSON.parse(e.detail_json))).toEqual([{ users: 1, tokens: 1, sessions: 0, overrides: 1 }, { peppered: { tokens: 1, sessions: 0 } }]);
      expect(raw.prepare("SELECT token_hash FROM api_tokens WHERE name = 'old'").pluck().get()).toBe(t.app.credentials.seal().secretHash('swt_from-an-older-release'));
      await t.app.flags.invalidate();
      expect(t.app.flags.values().get('cron_scheduler')).toBe(false);
      // Written later without a seal, by whoever holds the file: the next start seals nothing.
      raw.prepare("INSERT INTO api_tokens (token_hash, name, agent_name, created_at, scopes) VALUES (?, 'later', 'deployer', 1, 'decide')").run(sha256('swt_written-later'));
      await t.app.bootstrap();
      expect(await t.app.auth.principalForToken('swt_written-later')).toBeUndefined();
      // Each refusal recorded once: the old row asked for before the start sealed it, and the one written later.
      const later = (raw.prepare("SELECT id FROM api_tokens WHERE name = 'later'").get() as { id: number }).id;
      const refused = raw.prepare("SELECT target FROM security_events WHERE type = 'auth.unverified' ORDER BY id").all() as { target: string }[];
      expect(refused.map((e) => e.target)).toEqual([expect.stringMatching(/^api_tokens#\d+$/), `api_tokens#${later}`]);
    } finally {
      raw.close();
    }
  });
});
