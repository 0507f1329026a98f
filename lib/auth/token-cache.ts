/**
 * The decision path's port from a bearer token to its principal, and the cache both databases keep behind it.
 *
 * Every API call names its token, and the decision listener answers thousands a second: looking each one up (its
 * SHA-256, a join of api_tokens and users) was about a tenth of an allowed check on SQLite and a round trip per request
 * on PostgreSQL. So each process keeps the principals of the tokens it has seen, and forgets them when tokens or users
 * change anywhere:
 *
 * - SQLite (tokens-sqlite.ts, synchronous): the triggers of migration 0009 move auth_generation.n with every change to
 *   api_tokens and users, by any connection of any process; reading that one row per lookup (or once per group of
 *   decisions) costs a fraction of the lookup, and a change is in force at once.
 * - PostgreSQL (tokens-postgres.ts): the auth store publishes every change to tokens and users on the change feed
 *   (AUTH_CHANNEL, NOTIFY), and every server forgets what it kept when it hears of one (within milliseconds); and no
 *   principal is kept longer than TOKEN_TTL_MS after the lookup that found it, so a change the feed does not carry (a
 *   user disabled by hand in psql, a feed connection that dropped) is in force on every server within a second too.
 *
 * Only tokens that exist are kept (a spray of guessed tokens is looked up each time and keeps nothing), at most
 * MAX_KNOWN_TOKENS of them (bounded memory, issue 23).
 */
import { sql, type SQL } from 'drizzle-orm';
import { BoundedCache } from '@/lib/permissions/bounded-cache';
import { isTokenScope, type Principal, type Role, type TokenScope } from '@/lib/permissions';
import { LAST_USE_EVERY_MS, type LastUse } from './last-use';
import { tokenSealed, userSealed, type SealCheck } from './seal';

/**
 * The most token principals kept between changes of the database (about 2 MB at most). Only tokens that exist are
 * kept, but there may be many (one per agent); the least recently used are forgotten and looked up again.
 */
export const MAX_KNOWN_TOKENS = 10_000;

/** The channel of the change feed on which every change to tokens and users is published. */
export const AUTH_CHANNEL = 'swarm_auth';

/**
 * A token row joined with its user, as the lookup reads it (SQLite answers the boolean as 0 or 1), with what the seals
 * of both rows cover (lib/auth/seal.ts).
 */
export interface TokenRow {
  id: number | string;
  tokenHash: string;
  userId: number | string | null;
  mac: string | null;
  userMac: string | null;
  passwordHash: string | null;
  issuer: string | null;
  subject: string | null;
  agentName: string | null;
  /** comma-separated (TOKEN_SCOPES) */
  scopes: string;
  /** seconds; null: it never expires */
  expiresAt: number | null;
  username: string | null;
  role: Exclude<Role, 'anonymous'> | null;
  disabled: unknown;
}

/** The lookup of a token's hash: one statement, the same on both databases (each prepares it once). */
export const tokenPrincipalQuery = (hash: string): SQL =>
  sql`SELECT t.id AS "id", t.token_hash AS "tokenHash", t.user_id AS "userId", t.mac AS "mac", t.agent_name AS "agentName",
        t.scopes AS "scopes", t.expires_at AS "expiresAt", u.username AS "username", u.role AS "role", u.disabled AS "disabled",
        u.password_hash AS "passwordHash", u.issuer AS "issuer", u.subject AS "subject", u.mac AS "userMac"
      FROM api_tokens t LEFT JOIN users u ON u.id = t.user_id
      WHERE t.token_hash = ${hash} AND t.revoked_at IS NULL AND t.disabled_at IS NULL`;

/** A token's scopes as stored (comma-separated); what is not a scope is dropped (a token without any does nothing). */
export function parseScopes(text: string | null | undefined): TokenScope[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(isTokenScope);
}

/**
 * The principal of a token row (joined with its user) at `nowSeconds`: an agent, an enabled user, or nobody (also for
 * a token past its expiry: refused as a revoked one is, before the sweeper marks it).
 */
export function principalOfToken(row: TokenRow | undefined, nowSeconds: number, check: SealCheck): Principal | undefined {
  if (!row) return undefined;
  if (row.expiresAt !== null && row.expiresAt <= nowSeconds) return undefined;
  // Neither a token nor its user is trusted for being in the database: each row carries its seal (lib/auth/seal.ts).
  if (!tokenSealed(check, row.id, row)) return undefined;
  const scopes = parseScopes(row.scopes);
  if (row.agentName) return { kind: 'agent', id: row.agentName, role: 'viewer', agent: row.agentName, scopes };
  if (!row.username || !row.role || row.disabled === true || row.disabled === 1) return undefined;
  if (!userSealed(check, { id: row.userId!, username: row.username, role: row.role, passwordHash: row.passwordHash, disabled: row.disabled, issuer: row.issuer, subject: row.subject, mac: row.userMac })) {
    return undefined;
  }
  return { kind: 'user', id: row.username, role: row.role, scopes };
}

/** How long, ms from `nowMs`, a row's principal may be kept before its expiry (Infinity: it never expires). */
export function msToExpiry(row: TokenRow, nowMs: number): number {
  return row.expiresAt === null ? Infinity : row.expiresAt * 1000 - nowMs;
}

/** What the auth store needs of the port: the lookup, and to say that this process changed tokens or users. */
export interface TokenPrincipals {
  /** synchronous on SQLite (the decision listener's group commit), a promise on PostgreSQL */
  principalForToken(token: string): Principal | undefined | Promise<Principal | undefined>;
  /** forget every principal kept, at once (this process changed tokens or users) */
  forget(): void;
  /** tokens whose principal is kept now (at most the bound) */
  readonly knownTokens: number;
  /** the last use of the tokens this process saw, written in the background (last-use.ts) */
  readonly lastUse: LastUse | undefined;
}

/**
 * The principals of known tokens, each until a moment (`until`, ms on the caller's clock; Infinity: until the
 * generation moves), all of them valid for one generation of the database.
 */
export class TokenCache {
  /** `noted`: when the token's use was last told to `uses` (the caller's clock) */
  private readonly known: BoundedCache<string, { principal: Principal; until: number; id: number; noted: number }>;
  private generation: number | undefined;

  constructor(
    max = MAX_KNOWN_TOKENS,
    /** told of a token's use at most once a minute (a hit of a kept token costs a comparison, no write) */
    private readonly uses?: LastUse,
  ) {
    this.known = new BoundedCache(max);
  }

  /** Make `generation` the one in force: a different one than before forgets everything kept. */
  at(generation: number): void {
    if (generation !== this.generation) {
      this.known.clear();
      this.generation = generation;
    }
  }

  /** The principal kept for `token` and still valid at `now`, else undefined; a hit is a use of the token. */
  get(token: string, now: number): Principal | undefined {
    const hit = this.known.get(token);
    if (!hit || now >= hit.until) return undefined;
    if (now - hit.noted >= LAST_USE_EVERY_MS && this.uses) {
      hit.noted = now;
      this.uses.note(hit.id);
    }
    return hit.principal;
  }

  /** Keep the principal of token `id` (found by a lookup now, which is a use of it) until `until`. */
  keep(token: string, principal: Principal, id: number, now: number, until = Infinity): void {
    this.known.set(token, { principal: Object.freeze(principal), until, id, noted: now });
    this.uses?.note(id);
  }

  /** Tell of a use of a token that is not kept (found by a lookup that may not keep it). */
  used(id: number): void {
    this.uses?.note(id);
  }

  clear(): void {
    this.known.clear();
  }

  get size(): number {
    return this.known.size;
  }
}
