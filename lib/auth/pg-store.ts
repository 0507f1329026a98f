/**
 * Users, sessions and API tokens on PostgreSQL, for several servers on one database: a session opened on one server
 * and a token created on another work on every server, and a token revoked (or a session ended) anywhere is refused
 * everywhere at once, because nothing is cached: every request looks its hash up. The same rules and the same hashes
 * as the SQLite store (lib/auth/store.ts).
 */
import { and, count, desc, eq, gt, isNull, lt } from 'drizzle-orm';
import type pg from 'pg';
import { pgDatabase, type PgDb } from '@/db/pg/client';
import { apiTokens, sessions, users } from '@/db/pg/schema';
import type { ApiTokenRow, UserRow } from '@/db/schema';
import { AppError } from '@/lib/errors';
import type { Principal } from '@/lib/permissions';
import { DUMMY_PASSWORD_HASH, hashPassword, randomToken, sha256, verifyPassword } from './secrets';
import { assertNewUser, assertPassword, principalOfSession, principalOfToken, SESSION_TTL_SECONDS, tokenOwner, type AuthListener, type UserRole } from './store';

const now = () => Date.now() / 1000;

export class PgAuthStore {
  private readonly db: PgDb;

  constructor(
    pool: pg.Pool,
    private readonly onEvent: (event: Parameters<AuthListener>[0]) => void | Promise<void> = () => {},
  ) {
    this.db = pgDatabase(pool);
  }

  async userCount(): Promise<number> {
    return (await this.db.select({ n: count() }).from(users))[0]?.n ?? 0;
  }

  async hasAdmin(): Promise<boolean> {
    return (await this.db.select({ id: users.id }).from(users).where(and(eq(users.role, 'admin'), eq(users.disabled, false))).limit(1)).length > 0;
  }

  async findUser(username: string): Promise<UserRow | undefined> {
    return (await this.db.select().from(users).where(eq(users.username, username)).limit(1))[0];
  }

  async createUser(username: string, role: UserRole, password?: string, by = 'system'): Promise<UserRow> {
    assertNewUser(username, password);
    const [user] = await this.db
      .insert(users)
      .values({ username, role, passwordHash: password ? hashPassword(password) : null, createdAt: now() })
      .onConflictDoNothing()
      .returning();
    // The unique name decides between two servers creating the same user at once.
    if (!user) throw new AppError('CONFLICT', `User "${username}" already exists.`);
    await this.onEvent({ type: 'user.created', by, target: username, detail: { role, password: password ? 'set' : 'none' } });
    return user;
  }

  async setPassword(username: string, password: string): Promise<void> {
    assertPassword(password);
    const changed = await this.db.update(users).set({ passwordHash: hashPassword(password) }).where(eq(users.username, username)).returning({ id: users.id });
    if (changed.length !== 1) throw new AppError('NOT_FOUND', `There is no user "${username}".`);
  }

  async setRole(username: string, role: UserRole, by = 'system'): Promise<void> {
    const before = await this.findUser(username);
    if (!before) throw new AppError('NOT_FOUND', `There is no user "${username}".`);
    await this.db.update(users).set({ role }).where(eq(users.username, username));
    await this.onEvent({ type: 'user.role_changed', by, target: username, detail: { from: before.role, to: role } });
  }

  /** The user for a correct password, else undefined. Takes the same time whether or not the user exists. */
  async verifyLogin(username: string, password: string): Promise<UserRow | undefined> {
    const user = await this.findUser(username);
    const ok = verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
    return ok && user && user.passwordHash && !user.disabled ? user : undefined;
  }

  async createSession(userId: number): Promise<{ token: string; expiresAt: number }> {
    const token = randomToken('sws');
    const expiresAt = now() + SESSION_TTL_SECONDS;
    await this.db.delete(sessions).where(lt(sessions.expiresAt, now()));
    await this.db.insert(sessions).values({ idHash: sha256(token), userId, createdAt: now(), expiresAt });
    return { token, expiresAt };
  }

  async deleteSession(token: string): Promise<void> {
    await this.db.delete(sessions).where(eq(sessions.idHash, sha256(token)));
  }

  async principalForSession(token: string): Promise<Principal | undefined> {
    const [row] = await this.db
      .select({ username: users.username, role: users.role, disabled: users.disabled })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(and(eq(sessions.idHash, sha256(token)), gt(sessions.expiresAt, now())))
      .limit(1);
    return principalOfSession(row);
  }

  /** A token for a user (acts with the user's role) or for an agent (acts only as that agent). Shown once. */
  async createToken(owner: { username: string } | { agent: string }, name: string, by = 'system'): Promise<string> {
    const token = randomToken('swt');
    await this.insertToken(token, owner, name, by);
    return token;
  }

  /**
   * Store a token's hash for its owner and record it; a token that exists already is left alone (two servers starting
   * with the same SWARM_ADMIN_TOKEN create it once).
   */
  private async insertToken(token: string, owner: { username: string } | { agent: string }, name: string, by: string): Promise<void> {
    let userId: number | null = null;
    if ('username' in owner) {
      const user = await this.findUser(owner.username);
      if (!user) throw new AppError('NOT_FOUND', `There is no user "${owner.username}".`);
      userId = user.id;
    }
    const [row] = await this.db
      .insert(apiTokens)
      .values({ tokenHash: sha256(token), name, userId, agentName: 'agent' in owner ? owner.agent : null, createdAt: now() })
      .onConflictDoNothing()
      .returning();
    if (row) await this.onEvent({ type: 'token.created', by, target: String(row.id), detail: { name, owner: tokenOwner(owner) } });
  }

  async listTokens(): Promise<ApiTokenRow[]> {
    return this.db.select().from(apiTokens).orderBy(desc(apiTokens.id));
  }

  /** Revoke a token: it stops authenticating on every server at once. 404 unknown, 409 revoked already. */
  async revokeToken(id: number, by = 'system'): Promise<ApiTokenRow> {
    const [revoked] = await this.db.update(apiTokens).set({ revokedAt: now() }).where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt))).returning();
    if (!revoked) {
      const [row] = await this.db.select().from(apiTokens).where(eq(apiTokens.id, id));
      if (!row) throw new AppError('NOT_FOUND', `There is no token ${id}.`);
      throw new AppError('CONFLICT', `Token ${id} was revoked already.`);
    }
    await this.onEvent({ type: 'token.revoked', by, target: String(id), detail: { name: revoked.name, owner: revoked.agentName ? `agent:${revoked.agentName}` : `user#${revoked.userId}` } });
    return revoked;
  }

  /** Make sure a token with this exact value exists (SWARM_ADMIN_TOKEN); idempotent, also when servers start at once. */
  async ensureToken(token: string, owner: { username: string } | { agent: string }, name: string, by = 'system'): Promise<void> {
    if (token.length < 16) throw new AppError('BAD_REQUEST', `The token for "${name}" must have at least 16 characters.`);
    await this.insertToken(token, owner, name, by);
  }

  async principalForToken(token: string): Promise<Principal | undefined> {
    const [row] = await this.db
      .select({ agentName: apiTokens.agentName, username: users.username, role: users.role, disabled: users.disabled })
      .from(apiTokens)
      .leftJoin(users, eq(users.id, apiTokens.userId))
      .where(and(eq(apiTokens.tokenHash, sha256(token)), isNull(apiTokens.revokedAt)))
      .limit(1);
    return principalOfToken(row);
  }
}
