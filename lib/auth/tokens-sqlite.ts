/**
 * Token to principal on SQLite, synchronous: the decision listener decides a group of calls inside one transaction
 * without yielding (lib/decisions/group-commit.ts), so the lookup answers at once. Prepared once (building and preparing the
 * query on each call cost ~380 µs a request; prepared, a few µs), behind the cache of token-cache.ts, valid while
 * auth_generation.n stays the same (migration 0009's triggers move it with every change to api_tokens and users).
 */
import type Database from 'better-sqlite3';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';
import { SqliteDatabase } from '@/db/dialect';
import type { Principal } from '@/lib/permissions';
import { LastUse } from './last-use';
import type { SealCheck } from './seal';
import { MAX_KNOWN_TOKENS, msToExpiry, principalOfToken, TokenCache, tokenPrincipalQuery, type TokenPrincipals, type TokenRow } from './token-cache';

const LOOKUP = new SQLiteSyncDialect().sqlToQuery(tokenPrincipalQuery('')).sql;

export class SqliteTokenPrincipals implements TokenPrincipals {
  private readonly lookup: Database.Statement<[string], TokenRow>;
  private readonly generation: Database.Statement<[], number>;
  private readonly cache: TokenCache;
  /** the generation read once for a group of decisions (pinGeneration), else undefined: read on every lookup */
  private pinned: number | undefined;
  /** the clock read once for the same group (ms): a kept principal's expiry is checked against it */
  private pinnedNow = 0;
  readonly lastUse: LastUse;

  constructor(
    client: Database.Database,
    private readonly check: SealCheck,
    options: { maxKnownTokens?: number; lastUseFlushMs?: number } = {},
  ) {
    this.lastUse = new LastUse(new SqliteDatabase(client), options.lastUseFlushMs);
    this.cache = new TokenCache(options.maxKnownTokens ?? MAX_KNOWN_TOKENS, this.lastUse);
    this.lookup = client.prepare<[string], TokenRow>(LOOKUP);
    this.generation = client.prepare<[], number>('SELECT n FROM auth_generation WHERE id = 1').pluck();
  }

  principalForToken(token: string): Principal | undefined {
    this.cache.at(this.pinned ?? this.generation.get()!);
    // (the wall clock: a token's expiry is a time of day; kept principals are valid until it). A group of decisions
    // reads it once with the generation: reading it per lookup made a kept token's lookup 20 ns -> 90 ns.
    const now = this.pinned === undefined ? Date.now() : this.pinnedNow;
    const seen = this.cache.get(token, now);
    if (seen) return seen;
    const [keyed, bare] = this.check.seal().secretLookups(token);
    const row = this.lookup.get(keyed) ?? this.lookup.get(bare);
    const principal = principalOfToken(row, now / 1000, this.check);
    if (principal) this.cache.keep(token, principal, Number(row!.id), now, now + msToExpiry(row!, now));
    return principal;
  }

  /**
   * Read the generation once for a group of decisions that runs without yielding to other I/O (the decision
   * listener's group commit), instead of once per token lookup; the returned function ends it. Every request of the
   * group arrived before this read, so a change committed before it is in force for all of them, and one committed
   * while the group runs is concurrent with its requests. Nothing in such a group changes tokens or users.
   */
  pinGeneration(): () => void {
    this.pinned = this.generation.get()!;
    this.pinnedNow = Date.now();
    return () => {
      this.pinned = undefined;
    };
  }

  /** Nothing to do beyond the generation, which this process's own changes move too; forgetting early is harmless. */
  forget(): void {
    this.cache.clear();
  }

  get knownTokens(): number {
    return this.cache.size;
  }
}
