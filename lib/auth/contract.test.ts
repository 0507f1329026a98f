/**
 * The sign-in store contract, run against both stores: SQLite (two connections to one file) and PostgreSQL (two
 * connection pools to the test run's throwaway cluster), each pair standing for two servers on one database.
 * Sessions and tokens work on every server; a revocation or a sign-out on one is in force on the other at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import type { UserRow } from '@/db/schema';
import type { Principal } from '@/lib/permissions';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { PgAuthStore } from './pg-store';
import { AuthStore, type UserRole } from './store';

interface Contract {
  createUser(username: string, role: UserRole, password?: string): UserRow | Promise<UserRow>;
  verifyLogin(username: string, password: string): UserRow | undefined | Promise<UserRow | undefined>;
  createSession(userId: number): { token: string } | Promise<{ token: string }>;
  deleteSession(token: string): void | Promise<void>;
  principalForSession(token: string): Principal | undefined | Promise<Principal | undefined>;
  createToken(owner: { username: string } | { agent: string }, name: string): string | Promise<string>;
  revokeToken(id: number): unknown;
  setRole(username: string, role: UserRole): void | Promise<void>;
  listTokens(): { id: number; name: string }[] | Promise<{ id: number; name: string }[]>;
  principalForToken(token: string): Principal | undefined | Promise<Principal | undefined>;
}

const pg15 = usePostgres();
const cleanups: (() => unknown)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

const stores: Record<'SQLite' | 'PostgreSQL', () => Promise<{ a: Contract; b: Contract }>> = {
  async SQLite() {
    const dir = mkdtempSync(join(tmpdir(), 'swarm-auth-'));
    const [d1, d2] = [openDatabase({ path: join(dir, 'a.db') }), openDatabase({ path: join(dir, 'a.db') })];
    cleanups.push(() => {
      d1.$client.close();
      d2.$client.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return { a: new AuthStore(d1), b: new AuthStore(d2) };
  },
  async PostgreSQL() {
    const name = await pg15.freshDatabase('auth');
    const [p1, p2] = [pg15.pool(name, 3), pg15.pool(name, 3)];
    return { a: new PgAuthStore(p1), b: new PgAuthStore(p2) };
  },
};

describe.each(Object.keys(stores) as (keyof typeof stores)[])('sign-in on %s, two servers', (kind) => {
  let a: Contract;
  let b: Contract;
  beforeAll(async () => {
    ({ a, b } = await stores[kind]());
  });

  it('opens a session on one server that the other accepts, and ends it everywhere at once', async () => {
    await a.createUser('olivia', 'operator', 'operator-password-1');
    const user = (await b.verifyLogin('olivia', 'operator-password-1'))!;
    expect(user.username).toBe('olivia');
    expect(await b.verifyLogin('olivia', 'wrong-password')).toBeUndefined();
    const { token } = await b.createSession(user.id);
    expect(await a.principalForSession(token)).toEqual({ kind: 'user', id: 'olivia', role: 'operator' });
    await a.deleteSession(token);
    expect(await b.principalForSession(token)).toBeUndefined();
  });

  it('accepts a token created on one server on the other, and refuses it everywhere once revoked', async () => {
    const agentToken = await a.createToken({ agent: 'deployer' }, 'deployer on server a');
    expect(await b.principalForToken(agentToken)).toEqual({ kind: 'agent', id: 'deployer', role: 'viewer', agent: 'deployer' });
    const id = (await b.listTokens()).find((t) => t.name === 'deployer on server a')!.id;
    await b.revokeToken(id);
    expect(await a.principalForToken(agentToken)).toBeUndefined();
    await expect(Promise.resolve().then(() => a.revokeToken(id))).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await a.principalForToken('swt_not-a-token')).toBeUndefined();
  });

  it('refuses a token the moment another server revokes it, and follows a role change made there, however often it was used before', async () => {
    // Both servers have used the token many times (the SQLite store keeps the principals of tokens it has seen).
    await a.createUser('uma', 'operator', 'operator-password-2');
    const userToken = await a.createToken({ username: 'uma' }, 'uma on server a');
    for (let i = 0; i < 3; i++) {
      expect(await a.principalForToken(userToken)).toEqual({ kind: 'user', id: 'uma', role: 'operator' });
      expect(await b.principalForToken(userToken)).toEqual({ kind: 'user', id: 'uma', role: 'operator' });
    }
    await b.setRole('uma', 'auditor');
    expect(await a.principalForToken(userToken)).toEqual({ kind: 'user', id: 'uma', role: 'auditor' });
    const id = (await a.listTokens()).find((t) => t.name === 'uma on server a')!.id;
    await b.revokeToken(id);
    expect(await a.principalForToken(userToken)).toBeUndefined();
    expect(await b.principalForToken(userToken)).toBeUndefined();
  });

  it('creates a user once when two servers try at the same moment', async () => {
    const tries = await Promise.allSettled([Promise.resolve().then(() => a.createUser('alex', 'auditor')), Promise.resolve().then(() => b.createUser('alex', 'auditor'))]);
    expect(tries.filter((t) => t.status === 'fulfilled')).toHaveLength(1);
    expect((tries.find((t) => t.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'CONFLICT' });
  });
});
