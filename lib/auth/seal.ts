/**
 * What grants power is authenticated with a key, never trusted because it is in the database (issue 39): every row of
 * `users`, `api_tokens`, `sessions` and `flag_overrides`, every policy vote and activation, and every pin of an MCP
 * tool's definition (`mcp_tool_pins`, issue 42) carries a MAC (HMAC-SHA-256 with the installation's credentials key)
 * over the fields that decide who a principal is and what it may do. Whoever holds the database file but not the key
 * cannot insert a token with the hash of a secret of their choosing, an administrator, a session or a pin; nor raise a
 * role, point a token or a session at another person, lengthen a lifetime, widen a token's scopes or replace a password
 * hash. A row whose MAC does not verify is not used (the token, session or sign-in is refused as an unknown one) and
 * recorded (`auth.unverified`).
 *
 * Fields that only take power away (a revocation, a disabled token, the time of last use) are not covered: changing
 * them can only refuse more. What a MAC cannot tell is an older state of the same row put back (a revoked token made
 * live again from a copy taken before): the revocation is in the chained audit trail (`token.revoked`), and
 * docs/threat-model.md says so.
 *
 * The key is derived (HKDF-SHA-256) from the installation's secret that binds approvals (lib/approvals/binding.ts:
 * SWARM_APPROVAL_KEY, or the key folder's), kept apart from the database like the audit signing key.
 */
import { createHmac, hash, hkdfSync, timingSafeEqual } from 'node:crypto';

export const SEAL_PREFIX = 'mac1:';
/**
 * How a token's or a session's secret is stored: a keyed hash (HMAC-SHA-256 with the installation's credentials key, the
 * "pepper" kept with the keys) of its SHA-256. Whoever reads the database learns nothing to test guesses against; a
 * row stored before (the bare SHA-256) is turned into this form at a start, when its seal shows it genuine.
 */
export const PEPPER_PREFIX = 'k1:';

/** The fields of a user that decide who they are and what they may do. */
export interface SealedUser {
  id: number | string;
  username: string;
  role: string;
  passwordHash: string | null;
  disabled: unknown;
  issuer: string | null;
  subject: string | null;
}

/** The fields of a token that decide whose it is, what it may do and until when. */
export interface SealedToken {
  tokenHash: string;
  userId: number | string | null;
  agentName: string | null;
  scopes: string;
  expiresAt: number | null;
}

/** A flag's runtime override: what it sets, and who set it when and why (the history names them too). */
export interface SealedOverride {
  name: string;
  value: unknown;
  setBy: string;
  setAt: number;
  reason: string;
}

/** A vote on a proposed change to the rules. */
export interface SealedVote {
  proposalId: string;
  voter: string;
  voterRole: string;
  vote: string;
  votedAt: number;
}

/** An activation: which revision of the rules is in force from which point of the sequence, and who put it there. */
export interface SealedActivation {
  seq: number | string;
  revision: string;
  proposalId: string | null;
  kind: string;
  activatedBy: string;
  activatedAt: number;
}

/**
 * A pin of an MCP tool's definition (lib/mcp/pins): which definition of which server's tool is accepted (or held), by
 * whom and how, at which point of the table's order (its id: a copy of an older acceptance under a newer id is no pin).
 */
export interface SealedPin {
  id: number | string;
  serverId: string;
  toolName: string;
  sha256: string;
  state: string;
  acceptedBy: string | null;
  acceptedVia: string | null;
  at: number;
}

/** The fields of a session that decide whose it is and until when. */
export interface SealedSession {
  idHash: string;
  userId: number | string;
  expiresAt: number;
}

/** A text field as it is MACed (null apart from every text). */
const field = (v: string | null | undefined): string => (v === null || v === undefined ? '\u0000' : v);
/** A number as it is MACed, in one spelling whichever database gave it (PostgreSQL answers a bigint as text). */
const num = (v: number | string | null | undefined): string => (v === null || v === undefined ? '\u0000' : String(Number(v)));
const flag = (v: unknown): string => (v === true || v === 1 || v === '1' || v === 't' || v === 'true' ? '1' : '0');

export class CredentialSeal {
  private constructor(private readonly key: Buffer) {}

  /** The seal of an installation, its key derived from the installation's secret (`secret`: at least 32 bytes). */
  static ofSecret(secret: Buffer): CredentialSeal {
    if (secret.length < 32) throw new Error('The installation secret a credential seal is derived from has at least 32 bytes.');
    return new CredentialSeal(Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'swarm-permissions credentials v1', 32)));
  }

  private mac(kind: string, parts: readonly string[]): string {
    const h = createHmac('sha256', this.key).update(kind);
    // Each part with its length first: no two lists of fields spell the same input.
    for (const p of parts) h.update(`\u0000${Buffer.byteLength(p)}:${p}`);
    return SEAL_PREFIX + h.digest('base64url');
  }

  /** The stored form of a token's or a session's secret (PEPPER_PREFIX). */
  secretHash(secret: string): string {
    return this.pepper(hash('sha256', secret, 'hex'));
  }

  /**
   * Where a secret's row may be found: its keyed form, then the bare SHA-256 a row from before the pepper holds (used
   * only when its seal shows it genuine, as every row is; one written by the database's holder is refused and recorded).
   */
  secretLookups(secret: string): [keyed: string, bare: string] {
    const bare = hash('sha256', secret, 'hex');
    return [this.pepper(bare), bare];
  }

  /** The stored form of a secret whose bare SHA-256 (hex) a row from before the pepper holds. */
  pepper(sha256Hex: string): string {
    return PEPPER_PREFIX + createHmac('sha256', this.key).update('secret').update(sha256Hex).digest('hex');
  }

  user(u: SealedUser): string {
    return this.mac('user', [num(u.id), u.username, u.role, field(u.passwordHash), flag(u.disabled), field(u.issuer), field(u.subject)]);
  }

  token(t: SealedToken): string {
    return this.mac('token', [t.tokenHash, num(t.userId), field(t.agentName), t.scopes, num(t.expiresAt)]);
  }

  override(o: SealedOverride): string {
    return this.mac('override', [o.name, flag(o.value), o.setBy, num(o.setAt), o.reason]);
  }

  vote(v: SealedVote): string {
    return this.mac('vote', [v.proposalId, v.voter, v.voterRole, v.vote, num(v.votedAt)]);
  }

  activation(a: SealedActivation): string {
    return this.mac('activation', [num(a.seq), a.revision, field(a.proposalId), a.kind, a.activatedBy, num(a.activatedAt)]);
  }

  pin(p: SealedPin): string {
    return this.mac('mcp_pin', [num(p.id), p.serverId, p.toolName, p.sha256, p.state, field(p.acceptedBy), field(p.acceptedVia), num(p.at)]);
  }

  session(s: SealedSession): string {
    return this.mac('session', [s.idHash, num(s.userId), num(s.expiresAt)]);
  }

  /** Whether `stored` is the seal `expected` (constant time). */
  static matches(stored: string | null | undefined, expected: string): boolean {
    if (typeof stored !== 'string' || stored.length !== expected.length) return false;
    return timingSafeEqual(Buffer.from(stored), Buffer.from(expected));
  }
}

/** The tables whose rows are sealed. */
export type SealedTable = 'users' | 'api_tokens' | 'sessions' | 'flag_overrides' | 'mcp_tool_pins';

/** How a reader checks seals: the seal (loaded when first needed), and whom to tell of a row that fails. */
export interface SealCheck {
  seal(): CredentialSeal;
  /** a row whose seal does not verify (not used; recorded once per row and process) */
  unverified(table: SealedTable, id: string, what: string): void;
}

/** Whether a row carries the seal `expected`; `check` is told of one that does not. */
function kept(check: SealCheck, stored: string | null, expected: string, table: SealedTable, id: string, what: string): boolean {
  if (CredentialSeal.matches(stored, expected)) return true;
  check.unverified(table, id, what);
  return false;
}

export const userSealed = (check: SealCheck, u: SealedUser & { mac: string | null }): boolean =>
  kept(check, u.mac, check.seal().user(u), 'users', String(u.id), `user "${u.username}"`);

export const tokenSealed = (check: SealCheck, id: number | string, t: SealedToken & { mac: string | null }): boolean =>
  kept(check, t.mac, check.seal().token(t), 'api_tokens', String(id), `token ${id}`);

export const sessionSealed = (check: SealCheck, s: SealedSession & { mac: string | null }): boolean =>
  kept(check, s.mac, check.seal().session(s), 'sessions', s.idHash.slice(0, 12), 'a session');

export const pinSealed = (check: SealCheck, p: SealedPin & { mac: string | null }): boolean =>
  kept(check, p.mac, check.seal().pin(p), 'mcp_tool_pins', String(p.id), `the ${p.state} definition of MCP tool "${p.toolName}" of server "${p.serverId}"`);

export const overrideSealed = (check: SealCheck, o: SealedOverride & { mac: string | null }): boolean =>
  kept(check, o.mac, check.seal().override(o), 'flag_overrides', o.name, `the runtime override of flag "${o.name}"`);
