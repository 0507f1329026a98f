/**
 * The lifecycle of tokens (issue 27), the rules without I/O: which scopes a token may have, how long it lives, and
 * the durations people write (`--expires 30d`, `--overlap 24h`). The auth store (store.ts) applies them.
 */
import type { ApiTokenRow } from '@/db/schema';
import { AppError } from '@/lib/errors';
import { isTokenScope, TOKEN_SCOPES, type Role, type TokenScope } from '@/lib/permissions';

/** What the active profiles ask of tokens (lib/profiles: identity); nothing: tokens never expire nor go stale. */
export interface TokenPolicy {
  /** a token lives at most this many days */
  maxDays?: number;
  /** a token unused this many days is disabled by the sweeper */
  inactiveDays?: number;
}

export interface TokenOptions {
  /** default: an agent's `decide`, a person's the scope of their role */
  scopes?: readonly TokenScope[];
  /** its life from now, seconds (default: the profile's longest; null: never expires, refused under such a profile) */
  expiresInSeconds?: number | null;
}

export interface IssuedToken {
  /** the secret, shown once */
  token: string;
  id: number;
  scopes: readonly TokenScope[];
  /** seconds since the epoch; null: never */
  expiresAt: number | null;
}

export interface RotatedToken extends IssuedToken {
  rotatedFrom: number;
  /** when the replaced token stops working */
  oldExpiresAt: number;
}

/** The ids of the tokens a sweep marked expired and disabled for disuse. */
export interface TokenSweep {
  expired: number[];
  disabled: number[];
}

/** The widest scope of a role (a viewer and an auditor read; an operator operates; an admin administers). */
export function roleScope(role: Exclude<Role, 'anonymous'>): TokenScope {
  return role === 'admin' ? 'admin' : role === 'operator' ? 'operate' : 'read';
}

/** The scopes a token gets when none are asked for. */
export function defaultScopes(owner: Exclude<Role, 'anonymous'> | 'agent'): TokenScope[] {
  return owner === 'agent' ? ['decide'] : [roleScope(owner)];
}

/** 400 unless `scopes` suit the owner: an agent's token only `decide`s; a person's never goes above their role. */
export function assertScopes(owner: Exclude<Role, 'anonymous'> | 'agent', scopes: readonly string[]): asserts scopes is readonly TokenScope[] {
  if (scopes.length === 0) throw new AppError('BAD_REQUEST', `A token needs at least one scope (${TOKEN_SCOPES.join(', ')}).`);
  const unknown = scopes.filter((s) => !isTokenScope(s));
  if (unknown.length > 0) throw new AppError('BAD_REQUEST', `Unknown scope ${unknown.map((s) => `"${s}"`).join(', ')}: a scope is one of ${TOKEN_SCOPES.join(', ')}.`);
  if (owner === 'agent') {
    const other = scopes.filter((s) => s !== 'decide');
    if (other.length > 0) throw new AppError('BAD_REQUEST', `An agent's token has the scope "decide" only (not ${other.map((s) => `"${s}"`).join(', ')}): agents ask for decisions, people read and operate.`);
    return;
  }
  const widest = roleScope(owner);
  const above = scopes.filter((s) => TOKEN_SCOPES.indexOf(s as TokenScope) > TOKEN_SCOPES.indexOf(widest));
  if (above.length > 0) {
    throw new AppError('BAD_REQUEST', `Scope ${above.map((s) => `"${s}"`).join(', ')} is above what role "${owner}" allows: a ${owner}'s token is scoped "${widest}" at most.`);
  }
}

/**
 * When a token made at `now` expires: after `requested` seconds if asked (null: never), else after the profile's
 * longest life, else never. 400 for a life longer than the profile allows (or none under a profile that sets one).
 */
export function expiryOf(policy: TokenPolicy, requested: number | null | undefined, now: number): number | null {
  const max = policy.maxDays === undefined ? undefined : policy.maxDays * 86_400;
  if (requested === undefined) return max === undefined ? null : now + max;
  if (requested !== null && (!Number.isFinite(requested) || requested <= 0)) throw new AppError('BAD_REQUEST', 'A token\'s life is a duration above zero (e.g. 30d).');
  if (max !== undefined && (requested === null || requested > max)) {
    throw new AppError('BAD_REQUEST', `The active profile lets a token live at most ${policy.maxDays} days: ask for ${policy.maxDays}d or less.`);
  }
  return requested === null ? null : now + requested;
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800 };

/** A duration as people write it: `90d`, `24h`, `30m`, `45s`, `2w` (a whole number and a unit); undefined otherwise. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d{1,6})([smhdw])$/.exec(text.trim());
  return m ? Number(m[1]) * UNITS[m[2]!]! : undefined;
}

/** A token's state as people see it: in use, revoked, past its expiry, or disabled for disuse. */
export function tokenState(t: Pick<ApiTokenRow, 'revokedAt' | 'expiresAt' | 'disabledAt' | 'disabledReason'>, now: number) {
  if (t.revokedAt !== null) return 'revoked';
  if (t.disabledAt !== null) return t.disabledReason === 'expired' ? 'expired' : 'disabled';
  if (t.expiresAt !== null && t.expiresAt <= now) return 'expired';
  return 'active';
}
