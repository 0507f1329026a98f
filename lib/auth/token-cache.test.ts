/**
 * Bounded memory (issue 23): the SQLite store's cache of token principals holds at most its bound however many
 * tokens are used, answers each token with its own principal after forgetting it, and keeps no unknown token.
 * (The PostgreSQL store caches nothing: every request looks its hash up.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import { AuthStore, MAX_KNOWN_TOKENS } from './store';

const dir = mkdtempSync(join(tmpdir(), 'swarm-token-cache-'));
const db = openDatabase({ path: join(dir, 'a.db') });
afterAll(() => {
  db.$client.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the token principal cache', () => {
  it('keeps at most its bound of tokens and answers every token with its own agent, forgotten or not', () => {
    const store = new AuthStore(db, () => {}, { maxKnownTokens: 16 });
    const tokens = Array.from({ length: 200 }, (_, i) => store.createToken({ agent: `agent-${i}` }, `t${i}`));
    for (let round = 0; round < 3; round++) {
      tokens.forEach((token, i) => {
        expect(store.principalForToken(token)).toEqual({ kind: 'agent', id: `agent-${i}`, role: 'viewer', agent: `agent-${i}` });
        expect(store.knownTokens).toBeLessThanOrEqual(16);
      });
    }
  });

  it('keeps no token that does not exist, however many are tried', () => {
    const store = new AuthStore(db, () => {}, { maxKnownTokens: 16 });
    for (let i = 0; i < 1_000; i++) expect(store.principalForToken(`swt_guessed_${i}`)).toBeUndefined();
    expect(store.knownTokens).toBe(0);
  });

  it('refuses a revoked token at once, also one it was keeping', () => {
    const store = new AuthStore(db, () => {}, { maxKnownTokens: 16 });
    const token = store.createToken({ agent: 'revoked-soon' }, 'r');
    expect(store.principalForToken(token)?.id).toBe('revoked-soon');
    const id = store.listTokens().find((t) => t.agentName === 'revoked-soon')!.id;
    store.revokeToken(id);
    expect(store.principalForToken(token)).toBeUndefined();
  });

  it('holds no more than MAX_KNOWN_TOKENS with its own bound', () => {
    const store = new AuthStore(db);
    const n = MAX_KNOWN_TOKENS + 500;
    const tokens = db.$client.transaction(() => Array.from({ length: n }, (_, i) => store.createToken({ agent: `many-${i}` }, `m${i}`)))();
    for (const token of tokens) store.principalForToken(token);
    expect(store.knownTokens).toBeLessThanOrEqual(MAX_KNOWN_TOKENS);
    expect(store.principalForToken(tokens[0]!)?.id).toBe('many-0');
  });
});
