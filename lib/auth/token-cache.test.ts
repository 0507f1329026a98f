/**
 * The token principal cache on both databases (token-cache.ts). Bounded memory (issue 23): it holds at most its bound
 * however many tokens are used, answers each token with its own principal after forgetting it, and keeps no unknown
 * token. And it is a cache that is told: a revocation through the store is refused at once by the server that made
 * it; on PostgreSQL another server hears of it on the change feed (well within the second its time limit allows), and
 * without the feed the time limit alone refuses it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import { PostgresDatabase, SqliteDatabase, type SqlDatabase } from '@/db/dialect';
import { usePostgres } from '@/lib/test-support/use-postgres';
import { within } from '@/lib/test-support/wait';
import { testSealCheck } from '@/lib/test-support/temp-app';

const check = testSealCheck();
import { SqlAuthStore } from './store';
import { MAX_KNOWN_TOKENS, TokenCache, type TokenPrincipals } from './token-cache';
import { SqliteTokenPrincipals } from './tokens-sqlite';
import { PostgresTokenPrincipals } from './tokens-postgres';

const pg15 = usePostgres();
const dir = mkdtempSync(join(tmpdir(), 'swarm-token-cache-'));
const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

interface Database {
  db: SqlDatabase;
  /** the token port of a server on this database, as the application builds it (the feed started) */
  tokens(options?: { maxKnownTokens?: number }): Promise<TokenPrincipals>;
}

const databases: Partial<Record<'SQLite' | 'PostgreSQL', Database>> = {};
beforeAll(async () => {
  const sqlite = openDatabase({ path: join(dir, 'a.db') });
  closers.push(() => sqlite.$client.close());
  databases.SQLite = { db: new SqliteDatabase(sqlite.$client), tokens: async (o) => new SqliteTokenPrincipals(sqlite.$client, check, o) };
  const pg = new PostgresDatabase(pg15.pool(await pg15.freshDatabase('tokens'), 4));
  databases.PostgreSQL = {
    db: pg,
    tokens: async (o) => {
      const t = new PostgresTokenPrincipals(pg, check, o);
      await t.start();
      closers.push(() => t.stop());
      return t;
    },
  };
});

describe.each(['SQLite', 'PostgreSQL'] as const)('the token principal cache on %s', (kind) => {
  const server = async (options?: { maxKnownTokens?: number }) => {
    const { db, tokens } = databases[kind]!;
    const port = await tokens(options);
    return { store: new SqlAuthStore(db, port, check), tokens: port };
  };

  it('keeps at most its bound of tokens and answers every token with its own agent, forgotten or not', async () => {
    const { store, tokens } = await server({ maxKnownTokens: 16 });
    const created = await Promise.all(Array.from({ length: 200 }, (_, i) => store.createToken({ agent: `agent-${i}` }, `t${i}`)));
    for (let round = 0; round < 3; round++) {
      for (const [i, token] of created.entries()) {
        expect(await store.principalForToken(token)).toEqual({ kind: 'agent', id: `agent-${i}`, role: 'viewer', agent: `agent-${i}`, scopes: ['decide'] });
        expect(tokens.knownTokens).toBeLessThanOrEqual(16);
      }
    }
    expect(tokens.knownTokens).toBeGreaterThan(0);
  });

  it('keeps no token that does not exist, however many are tried', async () => {
    const { store, tokens } = await server({ maxKnownTokens: 16 });
    for (let i = 0; i < 300; i++) expect(await store.principalForToken(`swt_guessed_${i}`)).toBeUndefined();
    expect(tokens.knownTokens).toBe(0);
  });

  it('refuses a revoked token at once on the server that revoked it, also one it was keeping', async () => {
    const { store, tokens } = await server({ maxKnownTokens: 16 });
    const token = await store.createToken({ agent: 'revoked-soon' }, 'r');
    // (On PostgreSQL the feed tells of the token's creation a moment later, which empties the cache once.)
    await within(1_000, async () => (await store.principalForToken(token))?.id === 'revoked-soon' && tokens.knownTokens === 1);
    const id = (await store.listTokens()).find((t) => t.agentName === 'revoked-soon')!.id;
    await store.revokeToken(id);
    expect(await store.principalForToken(token)).toBeUndefined();
  });
});

// The same TokenCache on both databases: its default bound is measured once, on SQLite, where a lookup costs no round trip.
describe('the token principal cache on SQLite, at its default bound', () => {
  it('holds no more than MAX_KNOWN_TOKENS with its own bound', async () => {
    const kind = 'SQLite';
    const { db, tokens: open } = databases[kind]!;
    const tokens = await open();
    const made = Array.from({ length: MAX_KNOWN_TOKENS + 500 }, (_, i) => `swt_many_${kind}_${i}`);
    // Stored as `swarm tokens add` stores them (the hash and the row's seal), a thousand rows a statement.
    const seal = check.seal();
    for (let i = 0; i < made.length; i += 1_000) {
      const rows = made.slice(i, i + 1_000).map((t, k) => {
        const agentName = `many-${i + k}`;
        const tokenHash = seal.secretHash(t);
        const mac = seal.token({ tokenHash, userId: null, agentName, scopes: '', expiresAt: null });
        return sql`(${tokenHash}, ${t}, ${agentName}, 1, ${mac})`;
      });
      await db.run(sql`INSERT INTO api_tokens (token_hash, name, agent_name, created_at, mac) VALUES ${sql.join(rows, sql`, `)}`);
    }
    for (const token of made) await tokens.principalForToken(token);
    expect(tokens.knownTokens).toBeLessThanOrEqual(MAX_KNOWN_TOKENS);
    expect(tokens.knownTokens).toBeGreaterThan(MAX_KNOWN_TOKENS / 2);
    expect((await tokens.principalForToken(made[0]!))?.id).toBe('many-0');
  }, 60_000);
});

describe('the token principal cache on PostgreSQL, across servers', () => {
  it('forgets on every server when the change feed tells of a change, long before its time limit', async () => {
    const db = databases.PostgreSQL!.db as PostgresDatabase;
    const other = new PostgresTokenPrincipals(db, check, { ttlMs: 60_000 });
    await other.start();
    closers.push(() => other.stop());
    const store = new SqlAuthStore(db, await databases.PostgreSQL!.tokens(), check);
    const token = await store.createToken({ agent: 'heard-of' }, 'heard-of');
    await within(1_000, async () => (await other.principalForToken(token))?.id === 'heard-of' && other.knownTokens === 1);
    const id = (await store.listTokens()).find((t) => t.name === 'heard-of')!.id;
    await store.revokeToken(id);
    // Kept for a minute otherwise: only the feed can make this happen within a second.
    await within(1_000, async () => (await other.principalForToken(token)) === undefined);
  });

  it('refuses a change it never heard of once its time limit has passed', async () => {
    const db = databases.PostgreSQL!.db;
    const deaf = new PostgresTokenPrincipals(db, check, { ttlMs: 300 });
    const store = new SqlAuthStore(db, deaf, check);
    const token = await store.createToken({ agent: 'unheard-of' }, 'unheard-of');
    expect((await deaf.principalForToken(token))?.id).toBe('unheard-of');
    // Revoked by hand on the database: no store, no feed (and this port does not listen anyway).
    await db.run(sql`UPDATE api_tokens SET revoked_at = 1 WHERE name = 'unheard-of'`);
    expect((await deaf.principalForToken(token))?.id).toBe('unheard-of');
    const ms = await within(1_000, async () => (await deaf.principalForToken(token)) === undefined);
    expect(ms).toBeGreaterThan(100);
  });
});

describe('TokenCache', () => {
  it('forgets everything when the generation moves, and each principal after its time', () => {
    const cache = new TokenCache(4);
    cache.at(1);
    cache.keep('a', { kind: 'agent', id: 'a', role: 'viewer', agent: 'a' }, 1, 0, 100);
    cache.keep('b', { kind: 'agent', id: 'b', role: 'viewer', agent: 'b' }, 2, 0);
    expect(cache.get('a', 99)?.id).toBe('a');
    expect(cache.get('a', 100)).toBeUndefined();
    expect(cache.get('b', 1e12)?.id).toBe('b');
    cache.at(1);
    expect(cache.size).toBe(2);
    cache.at(2);
    expect(cache.size).toBe(0);
  });
});
