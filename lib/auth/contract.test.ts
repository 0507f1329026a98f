/**
 * The sign-in store contract, run against the one store on both databases: SQLite (two connections to one file) and
 * PostgreSQL (two connection pools to the test run's throwaway cluster), each pair standing for two servers on one
 * database, each server with its own token cache as the application wires it (tokens-sqlite.ts, tokens-postgres.ts).
 * Sessions and tokens work on every server; a sign-out on one is in force on the other at once; a revocation or a role
 * change is in force at once on the server that made it and within a second on the other, however often the token
 * was used there before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import { PostgresDatabase, SqliteDatabase } from '@/db/dialect';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { within } from '@/lib/test-support/wait';
import { SqlAuthStore, type AuthStore } from './store';
import type { TokenPrincipals } from './token-cache';
import { SqliteTokenPrincipals } from './tokens-sqlite';
import { PostgresTokenPrincipals } from './tokens-postgres';
import { testSealCheck } from '@/lib/test-support/temp-app';

const check = testSealCheck();

interface Server {
  store: AuthStore;
  tokens: TokenPrincipals;
  /** a statement run on this server's connection, behind the store's back (as psql or sqlite3 by hand) */
  byHand(query: SQL): Promise<number>;
}

const pg15 = usePostgres();
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const servers: Record<'SQLite' | 'PostgreSQL', () => Promise<{ a: Server; b: Server }>> = {
  async SQLite() {
    const dir = mkdtempSync(join(tmpdir(), 'swarm-auth-'));
    const [d1, d2] = [openDatabase({ path: join(dir, 'a.db') }), openDatabase({ path: join(dir, 'a.db') })];
    cleanups.push(() => {
      d1.$client.close();
      d2.$client.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const server = (d: typeof d1): Server => {
      const db = new SqliteDatabase(d.$client);
      const tokens = new SqliteTokenPrincipals(d.$client, check);
      return { store: new SqlAuthStore(db, tokens, check), tokens, byHand: (q) => db.run(q) };
    };
    return { a: server(d1), b: server(d2) };
  },
  async PostgreSQL() {
    const name = await pg15.freshDatabase('auth');
    const server = async (): Promise<Server> => {
      const db = new PostgresDatabase(pg15.pool(name, 3));
      const tokens = new PostgresTokenPrincipals(db, check);
      await tokens.start();
      cleanups.push(() => tokens.stop());
      return { store: new SqlAuthStore(db, tokens, check), tokens, byHand: (q) => db.run(q) };
    };
    return { a: await server(), b: await server() };
  },
};

describe.each(Object.keys(servers) as (keyof typeof servers)[])('sign-in on %s, two servers', (kind) => {
  let a: AuthStore;
  let b: AuthStore;
  let serverA: Server;
  let serverB: Server;
  beforeAll(async () => {
    ({ a: serverA, b: serverB } = await servers[kind]());
    ({ store: a } = serverA);
    ({ store: b } = serverB);
  });

  it('opens a session on one server that the other accepts, and ends it everywhere at once', async () => {
    await a.createUser('olivia', 'operator', 'operator-password-1');
    const user = (await b.verifyLogin('olivia', 'operator-password-1'))!;
    expect(user.username).toBe('olivia');
    expect(user.disabled).toBe(false);
    expect(await b.verifyLogin('olivia', 'wrong-password')).toBeUndefined();
    const { token } = await b.createSession(user.id);
    expect(await a.principalForSession(token)).toEqual({ kind: 'user', id: 'olivia', role: 'operator' });
    await a.deleteSession(token);
    expect(await b.principalForSession(token)).toBeUndefined();
  });

  it('accepts a token created on one server on the other, and refuses it everywhere once revoked', async () => {
    const agentToken = await a.createToken({ agent: 'deployer' }, 'deployer on server a');
    expect(await b.principalForToken(agentToken)).toEqual({ kind: 'agent', id: 'deployer', role: 'viewer', agent: 'deployer', scopes: ['decide'] });
    const id = (await b.listTokens()).find((t) => t.name === 'deployer on server a')!.id;
    await b.revokeToken(id);
    expect(await b.principalForToken(agentToken)).toBeUndefined();
    await within(1_000, async () => (await a.principalForToken(agentToken)) === undefined);
    await expect(a.revokeToken(id)).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(a.revokeToken(999_999)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await a.principalForToken('swt_not-a-token')).toBeUndefined();
  });

  it('follows a role change and refuses a revoked token on the other server within a second, however often it was used there', async () => {
    await a.createUser('uma', 'operator', 'operator-password-2');
    const userToken = await a.createToken({ username: 'uma' }, 'uma on server a');
    for (let i = 0; i < 3; i++) {
      expect(await a.principalForToken(userToken)).toEqual({ kind: 'user', id: 'uma', role: 'operator', scopes: ['operate'] });
      expect(await b.principalForToken(userToken)).toEqual({ kind: 'user', id: 'uma', role: 'operator', scopes: ['operate'] });
    }
    // Both servers keep the token now: what follows is the cache being told, not a first lookup.
    expect([serverA.tokens.knownTokens, serverB.tokens.knownTokens]).toEqual([expect.any(Number), expect.any(Number)]);
    expect(Math.min(serverA.tokens.knownTokens, serverB.tokens.knownTokens)).toBeGreaterThan(0);

    await b.setRole('uma', 'auditor');
    expect(await b.principalForToken(userToken)).toEqual({ kind: 'user', id: 'uma', role: 'auditor', scopes: ['operate'] });
    // SQLite reads the generation row on every lookup: the very next lookup follows. PostgreSQL hears the change feed.
    if (kind === 'SQLite') expect((await a.principalForToken(userToken))?.role).toBe('auditor');
    else await within(1_000, async () => (await a.principalForToken(userToken))?.role === 'auditor');
    const id = (await a.listTokens()).find((t) => t.name === 'uma on server a')!.id;
    await b.revokeToken(id);
    expect(await b.principalForToken(userToken)).toBeUndefined();
    if (kind === 'SQLite') expect(await a.principalForToken(userToken)).toBeUndefined();
    else await within(1_000, async () => (await a.principalForToken(userToken)) === undefined);
  });

  it('refuses within a second a token whose user was disabled by hand (no store told anyone)', async () => {
    await a.createUser('dora', 'viewer');
    const token = await a.createToken({ username: 'dora' }, 'dora');
    for (let i = 0; i < 3; i++) expect(await a.principalForToken(token)).toEqual({ kind: 'user', id: 'dora', role: 'viewer', scopes: ['read'] });
    await serverB.byHand(sql`UPDATE users SET disabled = ${true} WHERE username = 'dora'`);
    await within(1_100, async () => (await a.principalForToken(token)) === undefined);
    expect(await b.verifyLogin('dora', 'anything')).toBeUndefined();
  });

  it('creates a user once when two servers try at the same moment', async () => {
    const tries = await Promise.allSettled([a.createUser('alex', 'auditor'), b.createUser('alex', 'auditor')]);
    expect(tries.filter((t) => t.status === 'fulfilled')).toHaveLength(1);
    expect((tries.find((t) => t.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'CONFLICT' });
  });

  it('takes a name once whatever the case of its letters: every way of creating a user refuses a variant (409), every lookup finds the one', async () => {
    await a.createUser('Nadia', 'viewer', 'viewer-password-1');
    const tokens = (await a.listTokens()).length;
    const variants = [
      () => b.createUser('NADIA', 'admin', 'admin-password-1'),
      () => a.createUser('nadia', 'admin'),
      () => b.createUserWithToken({ username: 'nAdIa', role: 'admin' }, 'laptop'),
      () => a.createSsoUser('NADIA', 'admin', { issuer: 'https://login.example.com', subject: 's-nadia' }),
    ];
    for (const variant of variants) await expect(variant()).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('already exists as "Nadia"') });
    expect(await a.listTokens()).toHaveLength(tokens);
    // found by any case, on either server; the name stays as it was made
    expect((await b.findUser('NADIA'))?.username).toBe('Nadia');
    expect((await a.verifyLogin('nadia', 'viewer-password-1'))?.username).toBe('Nadia');
    await b.setRole('NADIA', 'auditor');
    expect((await a.findUser('Nadia'))?.role).toBe('auditor');
    expect(await a.issueToken({ username: 'nadia' }, 'by another case')).toMatchObject({ scopes: ['read'] });
    // two servers creating two cases of one name at the same moment: one of them
    const tries = await Promise.allSettled([a.createUser('Theo', 'viewer'), b.createUser('THEO', 'viewer')]);
    expect(tries.filter((t) => t.status === 'fulfilled')).toHaveLength(1);
    expect((tries.find((t) => t.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'CONFLICT' });
  });

  it('creates a user with a token, both or neither, and lists each token with its user', async () => {
    const { user, token } = await a.createUserWithToken({ username: 'ines', role: 'operator', password: 'operator-password-3' }, 'ines laptop');
    expect(user).toMatchObject({ username: 'ines', role: 'operator', disabled: false });
    expect(await b.principalForToken(token)).toEqual({ kind: 'user', id: 'ines', role: 'operator', scopes: ['operate'] });
    const before = (await b.listTokens()).length;
    await expect(b.createUserWithToken({ username: 'ines', role: 'admin' }, 'second')).rejects.toMatchObject({ code: 'CONFLICT' });
    const listed = await b.listTokens();
    expect(listed).toHaveLength(before);
    expect(listed.find((t) => t.name === 'ines laptop')).toMatchObject({ username: 'ines', agentName: null, revokedAt: null });
    expect(listed.find((t) => t.name === 'deployer on server a')).toMatchObject({ username: null, agentName: 'deployer' });
    expect((await a.findUser('ines'))?.role).toBe('operator');
  });

  it('makes SWARM_ADMIN_TOKEN once when two servers start with it at once, and knows when an admin exists', async () => {
    const admin = 'admin-token-of-the-contract-0123';
    expect(await a.hasAdmin()).toBe(false);
    await a.createUser('root', 'admin');
    await Promise.all([a.ensureToken(admin, { username: 'root' }, 'SWARM_ADMIN_TOKEN'), b.ensureToken(admin, { username: 'root' }, 'SWARM_ADMIN_TOKEN')]);
    expect((await a.listTokens()).filter((t) => t.name === 'SWARM_ADMIN_TOKEN')).toHaveLength(1);
    expect(await b.principalForToken(admin)).toEqual({ kind: 'user', id: 'root', role: 'admin', scopes: ['admin'] });
    expect(await b.hasAdmin()).toBe(true);
    await expect(a.ensureToken('short', { username: 'root' }, 'x')).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });
  it('uses no user, token or session the database holder wrote or changed without the key, and tells which', async () => {
    const { hashPassword, sha256 } = await import('./secrets');
    await a.createUser('nora', 'operator', 'operator-password-4');
    const root = (await a.findUser('root'))!;
    const nora = (await a.findUser('nora'))!;
    const noraToken = await a.createToken({ username: 'nora' }, 'nora laptop');
    expect((await b.principalForToken(noraToken))?.role).toBe('operator');
    const failed = () => check.failed.length;
    let before = failed();
    // 1. A token row with the hash of a secret of the holder's choosing, for an existing administrator.
    await serverB.byHand(sql`INSERT INTO api_tokens (token_hash, name, user_id, created_at, scopes) VALUES (${sha256('swt_chosen-by-the-holder')}, 'forged', ${root.id}, 1, 'admin')`);
    expect(await a.principalForToken('swt_chosen-by-the-holder')).toBeUndefined();
    expect(failed()).toBe(before + 1);
    // 2. An administrator inserted with the hash of a chosen password.
    await serverB.byHand(sql`INSERT INTO users (username, role, password_hash, created_at) VALUES ('mallory', 'admin', ${hashPassword('chosen-password-1')}, 1)`);
    expect(await b.verifyLogin('mallory', 'chosen-password-1')).toBeUndefined();
    expect(await b.findUser('mallory')).toBeUndefined();
    // 3. A session inserted for the administrator.
    await serverB.byHand(sql`INSERT INTO sessions (id_hash, user_id, created_at, expires_at) VALUES (${sha256('sws_chosen-session')}, ${root.id}, 1, 9999999999)`);
    expect(await a.principalForSession('sws_chosen-session')).toBeUndefined();
    // 4. A role raised in place: her own token and her password stop working, until an administrator sets a role.
    before = failed();
    await serverB.byHand(sql`UPDATE users SET role = 'admin' WHERE username = 'nora'`);
    await within(1_100, async () => (await a.principalForToken(noraToken)) === undefined);
    expect(await b.verifyLogin('nora', 'operator-password-4')).toBeUndefined();
    expect(failed()).toBeGreaterThan(before);
    // 5. A token pointed at another person, and its scopes widened.
    const id = (await a.listTokens()).find((t) => t.name === 'nora laptop')!.id;
    await serverB.byHand(sql`UPDATE api_tokens SET user_id = ${root.id}, scopes = 'admin' WHERE id = ${id}`);
    await within(1_100, async () => (await a.principalForToken(noraToken)) === undefined);
    expect(nora.id).not.toBe(root.id);
    // What the store itself writes carries its seal: a new person and token work as ever.
    const { token } = await a.createUserWithToken({ username: 'otto', role: 'viewer' }, 'otto laptop');
    expect(await b.principalForToken(token)).toMatchObject({ id: 'otto', role: 'viewer' });
  });

  it('seals the rows of a database from before seals once asked to, and only those', async () => {
    const { sha256 } = await import('./secrets');
    // A row as a release before seals wrote it (no mac): refused until the installation seals its rows.
    await serverA.byHand(sql`INSERT INTO api_tokens (token_hash, name, agent_name, created_at, scopes) VALUES (${sha256('swt_from-before-seals')}, 'old', 'trainer', 1, 'decide')`);
    expect(await a.principalForToken('swt_from-before-seals')).toBeUndefined();
    const sealed = await a.sealLegacy();
    expect(sealed.tokens).toBeGreaterThanOrEqual(1);
    expect(await b.principalForToken('swt_from-before-seals')).toMatchObject({ kind: 'agent', id: 'trainer' });
    // Nothing left to seal: a second call changes nothing.
    expect(await b.sealLegacy()).toEqual({ users: 0, tokens: 0, sessions: 0 });
    // Then its secret takes the keyed form (the pepper), sealed anew, and the bare SHA-256 is stored no more; a row
    // written by hand with a bare hash and no seal is left alone, and never used.
    await serverA.byHand(sql`INSERT INTO api_tokens (token_hash, name, agent_name, created_at, scopes) VALUES (${sha256('swt_written-later')}, 'later', 'trainer', 1, 'decide')`);
    const touch = (hash: string) => serverB.byHand(sql`UPDATE api_tokens SET name = name WHERE token_hash = ${hash}`);
    expect(await a.pepperLegacy()).toEqual({ tokens: sealed.tokens, sessions: 0 });
    expect(await touch(sha256('swt_from-before-seals'))).toBe(0);
    expect(await touch(check.seal().secretHash('swt_from-before-seals'))).toBe(1);
    expect(await b.principalForToken('swt_from-before-seals')).toMatchObject({ kind: 'agent', id: 'trainer' });
    expect(await touch(sha256('swt_written-later'))).toBe(1);
    expect(await b.principalForToken('swt_written-later')).toBeUndefined();
    expect(await b.pepperLegacy()).toEqual({ tokens: 0, sessions: 0 });
  });

  it('stores a token and a session only as the keyed hash of their secret', async () => {
    const { sha256 } = await import('./secrets');
    const token = await a.createToken({ agent: 'trainer' }, 'keyed');
    expect(await serverB.byHand(sql`UPDATE api_tokens SET name = name WHERE token_hash = ${check.seal().secretHash(token)}`)).toBe(1);
    expect(await serverB.byHand(sql`UPDATE api_tokens SET name = name WHERE token_hash = ${sha256(token)}`)).toBe(0);
    const root = (await a.findUser('root'))!;
    const session = await a.createSession(root.id);
    expect(await serverB.byHand(sql`UPDATE sessions SET created_at = created_at WHERE id_hash = ${check.seal().secretHash(session.token)}`)).toBe(1);
    expect(await b.principalForSession(session.token)).toMatchObject({ id: 'root' });
    await b.deleteSession(session.token);
    expect(await a.principalForSession(session.token)).toBeUndefined();
  });
});
