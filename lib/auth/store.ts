/**
 * Users, browser sessions and API tokens. Passwords are scrypt hashes; session ids and tokens are stored as sha-256
 * hashes and shown once.
 */
import { and, count, desc, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import type Database from 'better-sqlite3';
import type { Db } from '@/db/client';
import { BoundedCache } from '@/lib/bounded-cache';
import { apiTokens, sessions, users, type ApiTokenRow, type UserRow } from '@/db/schema';
import { AppError } from '@/lib/errors';
import type { AuthEventType, Principal, Role } from '@/lib/permissions';
import { DUMMY_PASSWORD_HASH, hashPassword, randomToken, sha256, verifyPassword } from './secrets';

export type UserRole = Exclude<Role, 'anonymous'>;
export const SESSION_TTL_SECONDS = 12 * 60 * 60;
const now = () => Date.now() / 1000;

/** Told of every change to users and tokens, so that each is a security event (who did it: `by`). */
export type AuthListener = (event: { type: AuthEventType; by: string; target: string; detail: Record<string, unknown> }) => void;

/** A user name and an optional password a new user may have; throws 400 otherwise. */
export function assertNewUser(username: string, password: string | undefined): void {
  if (!/^[a-zA-Z0-9_.@-]{1,64}$/.test(username)) {
    throw new AppError('BAD_REQUEST', 'A user name is 1 to 64 letters, digits, ".", "_", "@" or "-".');
  }
  if (password !== undefined) assertPassword(password);
}

export function assertPassword(password: string): void {
  if (password.length < 8) throw new AppError('BAD_REQUEST', 'A password has at least 8 characters.');
}

/** The principal of a token row (joined with its user): an agent, an enabled user, or nobody. */
export function principalOfToken(row: { agentName: string | null; username: string | null; role: UserRole | null; disabled: boolean | null } | undefined): Principal | undefined {
  if (!row) return undefined;
  if (row.agentName) return { kind: 'agent', id: row.agentName, role: 'viewer', agent: row.agentName };
  if (!row.username || !row.role || row.disabled) return undefined;
  return { kind: 'user', id: row.username, role: row.role };
}

/** The principal of a live session row (joined with its user), unless the user is disabled. */
export function principalOfSession(row: { username: string; role: UserRole; disabled: boolean } | undefined): Principal | undefined {
  if (!row || row.disabled) return undefined;
  return { kind: 'user', id: row.username, role: row.role };
}

/** What a token's owner is, in the security event that records the token. */
export const tokenOwner = (owner: { username: string } | { agent: string }) => ('username' in owner ? owner.username : `agent:${owner.agent}`);

/**
 * The most token principals kept between changes of the database (about 2 MB at most). Only tokens that exist are
 * kept, but there may be many (one per agent); the least recently used are forgotten and looked up again.
 */
export const MAX_KNOWN_TOKENS = 10_000;

export class AuthStore {
  /**
   * The lookups every API request makes, prepared once (measured: building and preparing the query on each call cost
   * ~380 µs a request; prepared, a few µs).
   */
  private readonly tokenLookup;
  private readonly sessionLookup;
  /**
   * The principals of the tokens seen, valid while auth_generation.n stays the same: the triggers of migration 0009
   * move it with every change to api_tokens and users, by any connection of any process (another listener worker,
   * the console revoking a token or disabling a user), so a revoked token is refused at once, as without the cache.
   * The token lookup and its SHA-256 were about a tenth of the decision listener's time; reading the one row is a
   * fraction of that. Unknown tokens are not kept.
   */
  private readonly generation: Database.Statement<[], number>;
  private readonly known: BoundedCache<string, Principal>;
  private knownAt = -1;
  /** the generation read once for a group of decisions (pinGeneration), else undefined: read on every lookup */
  private pinned: number | undefined;

  constructor(
    private readonly db: Db,
    private readonly onEvent: AuthListener = () => {},
    options: { maxKnownTokens?: number } = {},
  ) {
    this.known = new BoundedCache(options.maxKnownTokens ?? MAX_KNOWN_TOKENS);
    this.tokenLookup = db
      .select({ agentName: apiTokens.agentName, username: users.username, role: users.role, disabled: users.disabled })
      .from(apiTokens)
      .leftJoin(users, eq(users.id, apiTokens.userId))
      .where(and(eq(apiTokens.tokenHash, sql.placeholder('hash')), isNull(apiTokens.revokedAt)))
      .prepare();
    this.sessionLookup = db
      .select({ username: users.username, role: users.role, disabled: users.disabled })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(and(eq(sessions.idHash, sql.placeholder('hash')), gt(sessions.expiresAt, sql.placeholder('now'))))
      .prepare();
    this.generation = db.$client.prepare<[], number>('SELECT n FROM auth_generation WHERE id = 1').pluck();
  }

  userCount(): number {
    return this.db.select({ n: count() }).from(users).get()?.n ?? 0;
  }

  /** True when an enabled admin with a password exists. */
  hasAdmin(): boolean {
    return this.db.select({ id: users.id }).from(users).where(and(eq(users.role, 'admin'), eq(users.disabled, false))).limit(1).get() !== undefined;
  }

  findUser(username: string): UserRow | undefined {
    return this.db.select().from(users).where(eq(users.username, username)).get();
  }

  createUser(username: string, role: UserRole, password?: string, by = 'system'): UserRow {
    assertNewUser(username, password);
    if (this.findUser(username)) throw new AppError('CONFLICT', `User "${username}" already exists.`);
    const user = this.db
      .insert(users)
      .values({ username, role, passwordHash: password ? hashPassword(password) : null, createdAt: now() })
      .returning()
      .get();
    this.onEvent({ type: 'user.created', by, target: username, detail: { role, password: password ? 'set' : 'none' } });
    return user;
  }

  setPassword(username: string, password: string): void {
    assertPassword(password);
    const res = this.db.update(users).set({ passwordHash: hashPassword(password) }).where(eq(users.username, username)).run();
    if (res.changes !== 1) throw new AppError('NOT_FOUND', `There is no user "${username}".`);
  }

  setRole(username: string, role: UserRole, by = 'system'): void {
    const before = this.findUser(username);
    if (!before) throw new AppError('NOT_FOUND', `There is no user "${username}".`);
    this.db.update(users).set({ role }).where(eq(users.username, username)).run();
    this.onEvent({ type: 'user.role_changed', by, target: username, detail: { from: before.role, to: role } });
  }

  /** The user for a correct password, else undefined. Takes the same time whether or not the user exists. */
  verifyLogin(username: string, password: string): UserRow | undefined {
    const user = this.findUser(username);
    const ok = verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
    return ok && user && user.passwordHash && !user.disabled ? user : undefined;
  }

  createSession(userId: number): { token: string; expiresAt: number } {
    const token = randomToken('sws');
    const expiresAt = now() + SESSION_TTL_SECONDS;
    this.db.delete(sessions).where(lt(sessions.expiresAt, now())).run();
    this.db.insert(sessions).values({ idHash: sha256(token), userId, createdAt: now(), expiresAt }).run();
    return { token, expiresAt };
  }

  deleteSession(token: string): void {
    this.db.delete(sessions).where(eq(sessions.idHash, sha256(token))).run();
  }

  principalForSession(token: string): Principal | undefined {
    return principalOfSession(this.sessionLookup.get({ hash: sha256(token), now: now() }));
  }

  /** A token for a user (acts with the user's role) or for an agent (acts only as that agent). Shown once. */
  createToken(owner: { username: string } | { agent: string }, name: string, by = 'system'): string {
    const token = randomToken('swt');
    this.insertToken(token, owner, name, by);
    return token;
  }

  /** Every token (without secrets: only hashes are stored), newest first. */
  listTokens(): ApiTokenRow[] {
    return this.db.select().from(apiTokens).orderBy(desc(apiTokens.id)).all();
  }

  /** Revoke a token: it stops authenticating at once. 404 for an unknown id, 409 when it was revoked already. */
  revokeToken(id: number, by = 'system'): ApiTokenRow {
    const row = this.db.select().from(apiTokens).where(eq(apiTokens.id, id)).get();
    if (!row) throw new AppError('NOT_FOUND', `There is no token ${id}.`);
    if (row.revokedAt !== null) throw new AppError('CONFLICT', `Token ${id} was revoked already.`);
    const revoked = this.db.update(apiTokens).set({ revokedAt: now() }).where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt))).returning().get()!;
    this.onEvent({ type: 'token.revoked', by, target: String(id), detail: { name: row.name, owner: row.agentName ? `agent:${row.agentName}` : `user#${row.userId}` } });
    return revoked;
  }

  /** Make sure a token with this exact value exists (SWARM_ADMIN_TOKEN); idempotent. */
  ensureToken(token: string, owner: { username: string } | { agent: string }, name: string, by = 'system'): void {
    if (token.length < 16) throw new AppError('BAD_REQUEST', `The token for "${name}" must have at least 16 characters.`);
    const existing = this.db.select().from(apiTokens).where(eq(apiTokens.tokenHash, sha256(token))).get();
    if (!existing) this.insertToken(token, owner, name, by);
  }

  private insertToken(token: string, owner: { username: string } | { agent: string }, name: string, by: string): void {
    let userId: number | null = null;
    let agentName: string | null = null;
    if ('username' in owner) {
      const user = this.findUser(owner.username);
      if (!user) throw new AppError('NOT_FOUND', `There is no user "${owner.username}".`);
      userId = user.id;
    } else {
      agentName = owner.agent;
    }
    const row = this.db.insert(apiTokens).values({ tokenHash: sha256(token), name, userId, agentName, createdAt: now() }).returning().get();
    this.onEvent({ type: 'token.created', by, target: String(row.id), detail: { name, owner: tokenOwner(owner) } });
  }

  /**
   * Read the generation once for a group of decisions that runs without yielding to other I/O (the decision
   * listener's group commit), instead of once per token lookup; the returned function ends it. Every request of the
   * group arrived before this read, so a change committed before it is in force for all of them, and one committed
   * while the group runs is concurrent with its requests. Nothing in such a group changes tokens or users.
   */
  pinGeneration(): () => void {
    this.pinned = this.generation.get()!;
    return () => {
      this.pinned = undefined;
    };
  }

  /** tokens whose principal is kept now (at most MAX_KNOWN_TOKENS) */
  get knownTokens(): number {
    return this.known.size;
  }

  principalForToken(token: string): Principal | undefined {
    const generation = this.pinned ?? this.generation.get()!;
    if (generation !== this.knownAt) {
      this.known.clear();
      this.knownAt = generation;
    }
    const seen = this.known.get(token);
    if (seen) return seen;
    const principal = principalOfToken(this.tokenLookup.get({ hash: sha256(token) }));
    if (principal) {
      this.known.set(token, Object.freeze(principal));
    }
    return principal;
  }
}
