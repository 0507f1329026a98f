/**
 * Users, browser sessions and API tokens, one store for SQLite and PostgreSQL over the dialect port (db/dialect.ts).
 * Passwords are scrypt hashes; session ids and tokens are stored as sha-256 hashes and shown once. Several servers (or
 * processes) on one database share everything here: a session opened on one and a token created on another work on
 * every one; a sign-out ends the session everywhere at once (sessions are looked up on every request), and a revoked
 * token or a changed role is in force everywhere within a second (token-cache.ts: every change is published on the
 * change feed, and each process's token cache forgets).
 */
import { sql } from 'drizzle-orm';
import type { SqlDatabase, TxRunner, TxSteps } from '@/db/dialect';
import type { ApiTokenRow, UserRow } from '@/db/schema';
import { AppError } from '@/lib/errors';
import type { AuthEventType, Principal, Role } from '@/lib/permissions';
import { DUMMY_PASSWORD_HASH, hashPassword, randomToken, sha256, verifyPassword } from './secrets';
import { AUTH_CHANNEL, type TokenPrincipals } from './token-cache';

export type UserRole = Exclude<Role, 'anonymous'>;
export const SESSION_TTL_SECONDS = 12 * 60 * 60;
const now = () => Date.now() / 1000;

/** What a change to users and tokens tells, so that each is a security event (who did it: `by`). */
export interface AuthEvent {
  type: AuthEventType;
  by: string;
  target: string;
  detail: Record<string, unknown>;
}
/** Told of every change to users and tokens once it committed; a listener that fails makes the call fail. */
export type AuthListener = (event: AuthEvent) => void | Promise<void>;

export type TokenOwner = { username: string } | { agent: string };

/** A token as listed: its row and the name of its user (null for an agent's token). */
export type ListedToken = ApiTokenRow & { username: string | null };

/** A user name and an optional password a new user may have; throws 400 otherwise. */
function assertNewUser(username: string, password: string | undefined): void {
  if (!/^[a-zA-Z0-9_.@-]{1,64}$/.test(username)) {
    throw new AppError('BAD_REQUEST', 'A user name is 1 to 64 letters, digits, ".", "_", "@" or "-".');
  }
  if (password !== undefined) assertPassword(password);
}

function assertPassword(password: string): void {
  if (password.length < 8) throw new AppError('BAD_REQUEST', 'A password has at least 8 characters.');
}

/** Users, sessions and tokens, on either database. */
export interface AuthStore {
  /** True when an enabled admin exists. */
  hasAdmin(): Promise<boolean>;
  findUser(username: string): Promise<UserRow | undefined>;
  /** 400 for a bad name or password, 409 when the name is taken (also by another server at the same moment) */
  createUser(username: string, role: UserRole, password?: string, by?: string): Promise<UserRow>;
  /** A user and a token for it, both or neither (`swarm users add`); the token is shown once. */
  createUserWithToken(user: { username: string; role: UserRole; password?: string }, tokenName: string, by?: string): Promise<{ user: UserRow; token: string }>;
  setPassword(username: string, password: string): Promise<void>;
  setRole(username: string, role: UserRole, by?: string): Promise<void>;
  /** The user for a correct password, else undefined. Takes the same time whether or not the user exists. */
  verifyLogin(username: string, password: string): Promise<UserRow | undefined>;
  createSession(userId: number): Promise<{ token: string; expiresAt: number }>;
  deleteSession(token: string): Promise<void>;
  principalForSession(token: string): Promise<Principal | undefined>;
  /** A token for a user (acts with the user's role) or for an agent (acts only as that agent). Shown once. */
  createToken(owner: TokenOwner, name: string, by?: string): Promise<string>;
  /** Every token (without secrets: only hashes are stored), newest first, with the name of the user it acts for. */
  listTokens(): Promise<ListedToken[]>;
  /** Revoke a token: it stops authenticating everywhere. 404 for an unknown id, 409 when it was revoked already. */
  revokeToken(id: number, by?: string): Promise<ApiTokenRow>;
  /** Make sure a token with this exact value exists (SWARM_ADMIN_TOKEN); idempotent, also when servers start at once. */
  ensureToken(token: string, owner: TokenOwner, name: string, by?: string): Promise<void>;
  principalForToken(token: string): Promise<Principal | undefined>;
}

const USER_COLUMNS = sql`id, username, role, password_hash AS "passwordHash", created_at AS "createdAt", disabled`;
const TOKEN_COLUMNS = sql`id, token_hash AS "tokenHash", name, user_id AS "userId", agent_name AS "agentName", created_at AS "createdAt", revoked_at AS "revokedAt"`;

/** A user row as either database returns it (SQLite: the boolean as 0 or 1). */
const userRow = (r: Omit<UserRow, 'disabled'> & { disabled: unknown }): UserRow => ({ ...r, disabled: r.disabled === true || r.disabled === 1 });

export class SqlAuthStore implements AuthStore {
  constructor(
    private readonly db: SqlDatabase,
    /** the decision path's token lookup (token-cache.ts), told of this store's changes at once */
    private readonly tokens: TokenPrincipals,
    private readonly onEvent: AuthListener = () => {},
  ) {}

  async hasAdmin(): Promise<boolean> {
    return (await this.db.one(sql`SELECT id FROM users WHERE role = 'admin' AND disabled = ${false} LIMIT 1`)) !== undefined;
  }

  async findUser(username: string): Promise<UserRow | undefined> {
    const row = await this.db.one<UserRow>(sql`SELECT ${USER_COLUMNS} FROM users WHERE username = ${username}`);
    return row && userRow(row);
  }

  async createUser(username: string, role: UserRole, password?: string, by = 'system'): Promise<UserRow> {
    assertNewUser(username, password);
    const user = await this.changing(function* (tx) {
      return yield* insertUser(tx, username, role, password);
    });
    await this.onEvent(userCreated(user, password, by));
    return user;
  }

  async createUserWithToken(u: { username: string; role: UserRole; password?: string }, tokenName: string, by = 'system'): Promise<{ user: UserRow; token: string }> {
    assertNewUser(u.username, u.password);
    const token = randomToken('swt');
    const { user, tokenId } = await this.changing(function* (tx) {
      const user = yield* insertUser(tx, u.username, u.role, u.password);
      const tokenId = yield* insertToken(tx, token, { username: user.username }, tokenName);
      return { user, tokenId: tokenId! };
    });
    await this.onEvent(userCreated(user, u.password, by));
    await this.onEvent(tokenCreated(tokenId, tokenName, { username: user.username }, by));
    return { user, token };
  }

  async setPassword(username: string, password: string): Promise<void> {
    assertPassword(password);
    const changed = await this.db.run(sql`UPDATE users SET password_hash = ${hashPassword(password)} WHERE username = ${username}`);
    if (changed !== 1) throw new AppError('NOT_FOUND', `There is no user "${username}".`);
  }

  async setRole(username: string, role: UserRole, by = 'system'): Promise<void> {
    const db = this.db;
    const from = await this.changing(function* (tx) {
      const before = yield* tx.one<{ role: UserRole }>(sql`SELECT role FROM users WHERE username = ${username}${db.forUpdate}`);
      if (!before) throw new AppError('NOT_FOUND', `There is no user "${username}".`);
      yield* tx.run(sql`UPDATE users SET role = ${role} WHERE username = ${username}`);
      return before.role;
    });
    await this.onEvent({ type: 'user.role_changed', by, target: username, detail: { from, to: role } });
  }

  async verifyLogin(username: string, password: string): Promise<UserRow | undefined> {
    const user = await this.findUser(username);
    const ok = verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
    return ok && user && user.passwordHash && !user.disabled ? user : undefined;
  }

  async createSession(userId: number): Promise<{ token: string; expiresAt: number }> {
    const token = randomToken('sws');
    const at = now();
    const expiresAt = at + SESSION_TTL_SECONDS;
    await this.db.transaction(function* (tx) {
      yield* tx.run(sql`DELETE FROM sessions WHERE expires_at < ${at}`);
      yield* tx.run(sql`INSERT INTO sessions (id_hash, user_id, created_at, expires_at) VALUES (${sha256(token)}, ${userId}, ${at}, ${expiresAt})`);
    });
    return { token, expiresAt };
  }

  async deleteSession(token: string): Promise<void> {
    await this.db.run(sql`DELETE FROM sessions WHERE id_hash = ${sha256(token)}`);
  }

  /** The principal of a live session (joined with its user), unless the user is disabled. */
  async principalForSession(token: string): Promise<Principal | undefined> {
    const row = await this.db.one<Pick<UserRow, 'username' | 'role'> & { disabled: unknown }>(sql`
      SELECT u.username AS "username", u.role AS "role", u.disabled AS "disabled"
      FROM sessions s JOIN users u ON u.id = s.user_id
      WHERE s.id_hash = ${sha256(token)} AND s.expires_at > ${now()}`);
    // (SQLite answers the boolean as 0 or 1)
    if (!row || row.disabled === true || row.disabled === 1) return undefined;
    return { kind: 'user', id: row.username, role: row.role };
  }

  async createToken(owner: TokenOwner, name: string, by = 'system'): Promise<string> {
    const token = randomToken('swt');
    await this.addToken(token, owner, name, by);
    return token;
  }

  async listTokens(): Promise<ListedToken[]> {
    return this.db.all<ListedToken>(sql`
      SELECT ${TOKEN_COLUMNS}, (SELECT username FROM users u WHERE u.id = api_tokens.user_id) AS "username"
      FROM api_tokens ORDER BY id DESC`);
  }

  async revokeToken(id: number, by = 'system'): Promise<ApiTokenRow> {
    const revoked = await this.changing(function* (tx) {
      const row = yield* tx.one<ApiTokenRow>(sql`UPDATE api_tokens SET revoked_at = ${now()} WHERE id = ${id} AND revoked_at IS NULL RETURNING ${TOKEN_COLUMNS}`);
      if (row) return row;
      const exists = yield* tx.one(sql`SELECT id FROM api_tokens WHERE id = ${id}`);
      throw exists ? new AppError('CONFLICT', `Token ${id} was revoked already.`) : new AppError('NOT_FOUND', `There is no token ${id}.`);
    });
    await this.onEvent({ type: 'token.revoked', by, target: String(id), detail: { name: revoked.name, owner: revoked.agentName ? `agent:${revoked.agentName}` : `user#${revoked.userId}` } });
    return revoked;
  }

  async ensureToken(token: string, owner: TokenOwner, name: string, by = 'system'): Promise<void> {
    if (token.length < 16) throw new AppError('BAD_REQUEST', `The token for "${name}" must have at least 16 characters.`);
    await this.addToken(token, owner, name, by);
  }

  async principalForToken(token: string): Promise<Principal | undefined> {
    return this.tokens.principalForToken(token);
  }

  /** Store a token's hash for its owner and record it; a token that exists already is left alone (ensureToken). */
  private async addToken(token: string, owner: TokenOwner, name: string, by: string): Promise<void> {
    const id = await this.changing(function* (tx) {
      return yield* insertToken(tx, token, owner, name);
    });
    if (id !== undefined) await this.onEvent(tokenCreated(id, name, owner, by));
  }

  /**
   * A change to users or tokens: one transaction that publishes itself on the change feed (every server's token cache
   * forgets), and this process forgets at once, before the caller goes on.
   */
  private async changing<T>(body: (tx: TxRunner) => TxSteps<T>): Promise<T> {
    try {
      return await this.db.transaction(function* (tx) {
        const out = yield* body(tx);
        yield* tx.publish(AUTH_CHANNEL);
        return out;
      });
    } finally {
      this.tokens.forget();
    }
  }
}

/** A new user; 409 when the name is taken (the unique name decides between two servers creating it at once). */
function* insertUser(tx: TxRunner, username: string, role: UserRole, password: string | undefined): TxSteps<UserRow> {
  const row = yield* tx.one<UserRow>(sql`
    INSERT INTO users (username, role, password_hash, created_at) VALUES (${username}, ${role}, ${password ? hashPassword(password) : null}, ${now()})
    ON CONFLICT (username) DO NOTHING RETURNING ${USER_COLUMNS}`);
  if (!row) throw new AppError('CONFLICT', `User "${username}" already exists.`);
  return userRow(row);
}

/** A token's hash for its owner: its id, or undefined when this exact token exists already. */
function* insertToken(tx: TxRunner, token: string, owner: TokenOwner, name: string): TxSteps<number | undefined> {
  let userId: number | null = null;
  if ('username' in owner) {
    const user = yield* tx.one<{ id: number }>(sql`SELECT id FROM users WHERE username = ${owner.username}`);
    if (!user) throw new AppError('NOT_FOUND', `There is no user "${owner.username}".`);
    userId = user.id;
  }
  const agentName = 'agent' in owner ? owner.agent : null;
  const row = yield* tx.one<{ id: number }>(sql`
    INSERT INTO api_tokens (token_hash, name, user_id, agent_name, created_at) VALUES (${sha256(token)}, ${name}, ${userId}, ${agentName}, ${now()})
    ON CONFLICT (token_hash) DO NOTHING RETURNING id`);
  return row?.id;
}

const userCreated = (user: UserRow, password: string | undefined, by: string): AuthEvent => ({
  type: 'user.created',
  by,
  target: user.username,
  detail: { role: user.role, password: password ? 'set' : 'none' },
});

const tokenCreated = (id: number, name: string, owner: TokenOwner, by: string): AuthEvent => ({
  type: 'token.created',
  by,
  target: String(id),
  detail: { name, owner: 'username' in owner ? owner.username : `agent:${owner.agent}` },
});
