/**
 * Users, browser sessions and API tokens, one store for SQLite and PostgreSQL over the dialect port (db/dialect.ts).
 * Passwords are scrypt hashes; session ids and tokens are stored as sha-256 hashes and shown once. Several servers (or
 * processes) on one database share everything here: a session opened on one and a token created on another work on
 * every one; a sign-out ends the session everywhere at once (sessions are looked up on every request), and a revoked
 * token or a changed role is in force everywhere within a second (token-cache.ts: every change is published on the
 * change feed, and each process's token cache forgets).
 */
import { sql, type SQL } from 'drizzle-orm';
import type { SqlDatabase, TxRunner, TxSteps } from '@/db/dialect';
import type { ApiTokenRow, UserRow } from '@/db/schema';
import { AppError } from '@/lib/errors';
import type { AuthEventType, Principal, Role, TokenScope } from '@/lib/permissions';
import { DUMMY_PASSWORD_HASH, hashPassword, randomToken, verifyPassword } from './secrets';
import { CredentialSeal, PEPPER_PREFIX, sessionSealed, tokenSealed, userSealed, type SealCheck } from './seal';
import { AUTH_CHANNEL, parseScopes, type TokenPrincipals } from './token-cache';
import { assertScopes, defaultScopes, expiryOf, type IssuedToken, type RotatedToken, type TokenOptions, type TokenPolicy, type TokenSweep } from './token-lifecycle';
import { foldUserName, USER_NAME_PATTERN } from './user-name';

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
  if (!USER_NAME_PATTERN.test(username)) {
    throw new AppError('BAD_REQUEST', 'A user name is 1 to 64 letters, digits, ".", "_", "@" or "-".');
  }
  if (password !== undefined) assertPassword(password);
}

/**
 * `username` is this name, compared as every name is (lib/auth/user-name.ts): folded in ASCII on both databases, as
 * the unique index users_username_folded folds it (on PostgreSQL under the "C" collation, whatever the database's
 * locale), so that the index serves the lookup.
 */
function nameIs(dialect: SqlDatabase['dialect'], name: string): SQL {
  const folded = dialect === 'postgres' ? sql`lower(username COLLATE "C")` : sql`lower(username)`;
  return sql`${folded} = ${foldUserName(name)}`;
}

function assertPassword(password: string): void {
  if (password.length < 8) throw new AppError('BAD_REQUEST', 'A password has at least 8 characters.');
}

/** Users, sessions and tokens, on either database. */
export interface AuthStore {
  /** True when an enabled admin exists. */
  hasAdmin(): Promise<boolean>;
  /** Seal the rows from before seals: users and tokens sealed, sessions ended (once per installation). */
  sealLegacy(): Promise<{ users: number; tokens: number; sessions: number }>;
  /** Tokens and sessions stored before the pepper take its keyed form (at every start; only sealed rows). */
  pepperLegacy(): Promise<{ tokens: number; sessions: number }>;
  findUser(username: string): Promise<UserRow | undefined>;
  /** The enabled people with one of these roles (their rows sealed), by name. */
  usersWithRoles(roles: readonly string[]): Promise<UserRow[]>;
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
  /**
   * A token with its scopes and expiry (issue 27): by default an agent's `decide`, a person's the scope of their role,
   * and the profile's longest life; 400 for a scope above the owner's role or a life beyond the profile's. Shown once.
   */
  issueToken(owner: TokenOwner, name: string, options?: TokenOptions, by?: string): Promise<IssuedToken>;
  /**
   * A new token for the owner, name and scopes of a live one, which expires `overlapSeconds` from now (or sooner, if it
   * would anyway): both work meanwhile. 404 for an unknown id, 409 for one revoked, disabled or expired.
   */
  rotateToken(id: number, overlapSeconds: number, by?: string): Promise<RotatedToken>;
  /**
   * The sweeper's pass (lib/server/app.ts): a token past its expiry is marked (`token.expired`, once), one unused for
   * the profile's inactive days is disabled (`token.disabled`). `keep`: the hash of a token the environment names
   * (SWARM_ADMIN_TOKEN), never disabled for disuse.
   */
  sweepTokens(options?: { now?: number; keep?: string }): Promise<TokenSweep>;
  /** Single sign-on: the user a provider's subject was first seen as (lib/sso). */
  findUserByIdentity(issuer: string, subject: string): Promise<UserRow | undefined>;
  /**
   * A user first seen through single sign-on, marked with its issuer and subject: it never has a password. 409 when
   * the name is taken. Recorded as user.created with `via: 'sso'`.
   */
  createSsoUser(username: string, role: UserRole, identity: SsoIdentity, by?: string): Promise<UserRow>;
  /** A session opened through single sign-on, for `lifetimeSeconds`, keeping what ending and refreshing it need. */
  createSsoSession(userId: number, sso: SsoSessionInput, lifetimeSeconds: number): Promise<{ token: string; expiresAt: number }>;
  /** The SSO part of a live session (by its cookie value), or undefined for a password session or none. */
  ssoSessionOf(token: string): Promise<SsoSessionRow | undefined>;
  /** The SSO session with this id hash: the refresher's view. */
  ssoSessionByHash(idHash: string): Promise<SsoSessionRow | undefined>;
  /**
   * Claim the refresh of a session that is due (one process does it; the others go on with the session meanwhile):
   * true when this caller got it. `until` is when it may be claimed again, should this refresh never finish.
   */
  claimSsoRefresh(idHash: string, due: number, until: number): Promise<boolean>;
  /** After a refresh: the new (sealed) refresh token and ID token, and when to ask again. */
  refreshedSsoSession(idHash: string, sealedRefreshToken: string | null, sealedIdToken: string | null, nextAt: number): Promise<void>;
  /** End sessions by their id hash; the usernames whose sessions ended. */
  deleteSessionByHash(idHash: string): Promise<string[]>;
  /** End every session of a user (a person the provider no longer lets in); the usernames they were (one per session). */
  endUserSessions(username: string): Promise<string[]>;
  /**
   * A back-channel logout token of an issuer, taken once: its jti is kept until `keepUntil` (after which the token's
   * age refuses it anyway; sweepLogoutTokens deletes it then), and the SSO sessions of the provider session (sid) or
   * the person (subject) it names, begun within the second of its `issuedAt` or before (it never ends a session begun
   * after it was issued), end, in one transaction: the usernames they were, or null for a jti seen before (a replay,
   * which ends nothing). Two servers taking one token at once: one takes it, the other finds it taken.
   */
  endSsoSessions(issuer: string, token: LogoutTokenTaken): Promise<string[] | null>;
  /** Delete the logout tokens' jtis kept past their time (the sweeper); how many. */
  sweepLogoutTokens(now?: number): Promise<number>;
  /**
   * Ask a due SSO session's provider whether it still stands (lib/sso/service.ts sets this): false ends the session.
   * Without one, SSO sessions live until they expire.
   */
  setSessionRefresher(refresher: SessionRefresher): void;
}

/** A person at a provider: what marks a user first seen through single sign-on. */
export interface SsoIdentity {
  issuer: string;
  subject: string;
}

export interface SsoSessionInput extends SsoIdentity {
  provider: string;
  sid: string | null;
  sealedRefreshToken: string | null;
  sealedIdToken: string;
  /** when to first ask the provider again (null: never; without a refresh token the session lives its lifetime) */
  refreshAt: number | null;
}

export interface SsoSessionRow extends Omit<SsoSessionInput, 'sealedIdToken'> {
  idHash: string;
  username: string;
  role: UserRole;
  sealedIdToken: string | null;
  expiresAt: number;
}

/** What the store needs of a verified back-channel logout token (lib/sso/logout-token.ts). */
export interface LogoutTokenTaken {
  jti: string;
  /** until when its jti is kept (seconds since the epoch) */
  keepUntil: number;
  sid: string | null;
  subject: string | null;
  /** its iat */
  issuedAt: number;
}

/** Told of an SSO session whose refresh is due; answers whether it still stands. */
export type SessionRefresher = (idHash: string) => Promise<boolean>;

const USER_COLUMNS = sql`id, username, role, password_hash AS "passwordHash", created_at AS "createdAt", disabled, issuer, subject, mac`;
const SSO_SESSION_COLUMNS = sql`s.id_hash AS "idHash", u.username AS "username", u.role AS "role", s.sso_provider AS "provider", s.sso_issuer AS "issuer",
  s.sso_subject AS "subject", s.sso_sid AS "sid", s.sso_refresh_token AS "sealedRefreshToken", s.sso_id_token AS "sealedIdToken",
  s.sso_refresh_at AS "refreshAt", s.expires_at AS "expiresAt"`;
const TOKEN_COLUMNS = sql`id, token_hash AS "tokenHash", name, user_id AS "userId", agent_name AS "agentName", created_at AS "createdAt", revoked_at AS "revokedAt",
  expires_at AS "expiresAt", last_used_at AS "lastUsedAt", scopes, rotated_from AS "rotatedFrom", disabled_at AS "disabledAt", disabled_reason AS "disabledReason", mac`;

/** A user row as either database returns it (SQLite: the boolean as 0 or 1). */
const userRow = (r: Omit<UserRow, 'disabled'> & { disabled: unknown }): UserRow => ({ ...r, disabled: r.disabled === true || r.disabled === 1 });

export class SqlAuthStore implements AuthStore {
  constructor(
    private readonly db: SqlDatabase,
    /** the decision path's token lookup (token-cache.ts), told of this store's changes at once */
    private readonly tokens: TokenPrincipals,
    /** the seal every user, token and session row carries, and whom to tell of one that fails (lib/auth/seal.ts) */
    private readonly check: SealCheck,
    private readonly onEvent: AuthListener = () => {},
    /** the active profiles' token lifecycle (lib/profiles: identity), read at each use (a profile may change) */
    private readonly tokenPolicy: () => TokenPolicy = () => ({}),
  ) {}

  private refresher: SessionRefresher | undefined;

  async hasAdmin(): Promise<boolean> {
    const admins = await this.db.all<UserRow>(sql`SELECT ${USER_COLUMNS} FROM users WHERE role = 'admin' AND disabled = ${false}`);
    return admins.some((u) => userSealed(this.check, userRow(u)));
  }

  async usersWithRoles(roles: readonly string[]): Promise<UserRow[]> {
    if (roles.length === 0) return [];
    const rows = await this.db.all<UserRow>(sql`SELECT ${USER_COLUMNS} FROM users WHERE role IN (${sql.join(roles.map((r) => sql`${r}`), sql`, `)}) AND disabled = ${false} ORDER BY username`);
    // A row without its seal is nobody (lib/auth/seal.ts).
    return rows.map(userRow).filter((u) => userSealed(this.check, u));
  }

  async findUser(username: string): Promise<UserRow | undefined> {
    const row = await this.db.one<UserRow>(sql`SELECT ${USER_COLUMNS} FROM users WHERE ${nameIs(this.db.dialect, username)}`);
    // A row without its seal is no user (lib/auth/seal.ts): found by nobody, recorded once.
    const user = row && userRow(row);
    return user && userSealed(this.check, user) ? user : undefined;
  }

  async createUser(username: string, role: UserRole, password?: string, by = 'system'): Promise<UserRow> {
    assertNewUser(username, password);
    const seal = this.check.seal();
    const user = await this.changing((tx) => insertUser(tx, seal, username, role, password));
    await this.onEvent(userCreated(user, password, by));
    return user;
  }

  async createUserWithToken(u: { username: string; role: UserRole; password?: string }, tokenName: string, by = 'system'): Promise<{ user: UserRow; token: string }> {
    assertNewUser(u.username, u.password);
    const token = randomToken('swt');
    const life = { scopes: defaultScopes(u.role), expiresAt: expiryOf(this.tokenPolicy(), undefined, now()) };
    const seal = this.check.seal();
    const { user, tokenId } = await this.changing(function* (tx) {
      const user = yield* insertUser(tx, seal, u.username, u.role, u.password);
      const tokenId = yield* insertToken(tx, seal, token, { username: user.username }, tokenName, life);
      return { user, tokenId: tokenId! };
    });
    await this.onEvent(userCreated(user, u.password, by));
    await this.onEvent(tokenCreated(tokenId, tokenName, { username: user.username }, by, life));
    return { user, token };
  }

  async setPassword(username: string, password: string): Promise<void> {
    assertPassword(password);
    // A user of single sign-on signs in at its provider only: it never gets a password.
    const hash = hashPassword(password);
    await this.changing(updateUser(this.db, this.check, username, (u) => {
      if (u.issuer !== null) throw new AppError('CONFLICT', `User "${username}" signs in through single sign-on and cannot have a password.`);
      return { ...u, passwordHash: hash };
    }));
  }

  async setRole(username: string, role: UserRole, by = 'system'): Promise<void> {
    const before = await this.changing(updateUser(this.db, this.check, username, (u) => ({ ...u, role })));
    const from = before.role;
    // (the name as it is stored, whatever case it was asked by)
    await this.onEvent({ type: 'user.role_changed', by, target: before.username, detail: { from, to: role } });
  }

  async verifyLogin(username: string, password: string): Promise<UserRow | undefined> {
    // (findUser answers no row without its seal: its password is checked against the dummy hash, as an unknown name's)
    const user = await this.findUser(username);
    const ok = verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
    return ok && user && user.passwordHash && !user.disabled ? user : undefined;
  }

  async createSession(userId: number): Promise<{ token: string; expiresAt: number }> {
    return this.createSsoSession(userId, null, SESSION_TTL_SECONDS);
  }

  async deleteSession(token: string): Promise<void> {
    const [keyed, bare] = this.check.seal().secretLookups(token);
    await this.db.run(sql`DELETE FROM sessions WHERE id_hash IN (${keyed}, ${bare})`);
  }

  /** The principal of a live session (joined with its user), unless the user is disabled. */
  async principalForSession(token: string): Promise<Principal | undefined> {
    const at = now();
    type SessionPrincipalRow = Omit<UserRow, 'disabled' | 'createdAt'> & { disabled: unknown; refreshAt: number | null; userId: number; expiresAt: number; sessionMac: string | null };
    const byHash = (idHash: string) =>
      this.db.one<SessionPrincipalRow>(sql`
      SELECT u.id AS "id", u.username AS "username", u.role AS "role", u.password_hash AS "passwordHash", u.disabled AS "disabled", u.issuer AS "issuer",
        u.subject AS "subject", u.mac AS "mac", s.user_id AS "userId", s.expires_at AS "expiresAt", s.mac AS "sessionMac", s.sso_refresh_at AS "refreshAt"
      FROM sessions s JOIN users u ON u.id = s.user_id
      WHERE s.id_hash = ${idHash} AND s.expires_at > ${at}`);
    // (SQLite answers the boolean as 0 or 1.) Neither the session nor its user is trusted for being in the database
    // (lib/auth/seal.ts).
    const sound = (r: SessionPrincipalRow | undefined, idHash: string): r is SessionPrincipalRow =>
      r !== undefined && r.disabled !== true && r.disabled !== 1 && sessionSealed(this.check, { idHash, userId: r.userId, expiresAt: r.expiresAt, mac: r.sessionMac }) && userSealed(this.check, r);
    const [keyed, bare] = this.check.seal().secretLookups(token);
    let idHash = keyed;
    let row = await byHash(keyed);
    if (!row) row = await byHash((idHash = bare));
    if (!sound(row, idHash)) return undefined;
    // A single sign-on session whose provider session must be asked again: it ends here if that session ended, and
    // the role its groups give now (the refresh may have changed it) is read again.
    if (row.refreshAt !== null && row.refreshAt <= at && this.refresher) {
      if (!(await this.refresher(idHash))) return undefined;
      row = await byHash(idHash);
      if (!sound(row, idHash)) return undefined;
    }
    return { kind: 'user', id: row.username, role: row.role };
  }

  async createToken(owner: TokenOwner, name: string, by = 'system'): Promise<string> {
    return (await this.issueToken(owner, name, {}, by)).token;
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

  /**
   * A token the environment names (SWARM_ADMIN_TOKEN, the e2e server's): the full scope of its owner and no expiry,
   * whatever the profile says, so that the scripts and tests that use it keep working; the sweeper never disables it
   * for disuse while the environment names it (sweepTokens' `keep`), and the audit report lists it once it is older
   * than the profile's longest life. Change it by changing the environment (and revoking the old one).
   */
  async ensureToken(token: string, owner: TokenOwner, name: string, by = 'system'): Promise<void> {
    if (token.length < 16) throw new AppError('BAD_REQUEST', `The token for "${name}" must have at least 16 characters.`);
    const scopes = 'agent' in owner ? defaultScopes('agent') : defaultScopes((await this.findUser(owner.username))?.role ?? 'viewer');
    await this.addToken(token, owner, name, by, { scopes, expiresAt: null });
  }

  async principalForToken(token: string): Promise<Principal | undefined> {
    return this.tokens.principalForToken(token);
  }

  async findUserByIdentity(issuer: string, subject: string): Promise<UserRow | undefined> {
    const row = await this.db.one<UserRow>(sql`SELECT ${USER_COLUMNS} FROM users WHERE issuer = ${issuer} AND subject = ${subject}`);
    const user = row && userRow(row);
    return user && userSealed(this.check, user) ? user : undefined;
  }

  async createSsoUser(username: string, role: UserRole, identity: SsoIdentity, by = 'system'): Promise<UserRow> {
    assertNewUser(username, undefined);
    const seal = this.check.seal();
    const user = await this.changing((tx) => insertUser(tx, seal, username, role, undefined, identity));
    await this.onEvent({ type: 'user.created', by, target: user.username, detail: { role: user.role, password: 'none', via: 'sso', issuer: identity.issuer, subject: identity.subject } });
    return user;
  }

  /** (`sso` null: a password session, createSession) */
  async createSsoSession(userId: number, sso: SsoSessionInput | null, lifetimeSeconds: number): Promise<{ token: string; expiresAt: number }> {
    const token = randomToken('sws');
    const at = now();
    const expiresAt = at + lifetimeSeconds;
    const seal = this.check.seal();
    const idHash = seal.secretHash(token);
    const mac = seal.session({ idHash, userId, expiresAt });
    await this.db.transaction(function* (tx) {
      yield* tx.run(sql`DELETE FROM sessions WHERE expires_at < ${at}`);
      yield* tx.run(sql`
        INSERT INTO sessions (id_hash, user_id, created_at, expires_at, sso_provider, sso_issuer, sso_subject, sso_sid, sso_refresh_token, sso_id_token, sso_refresh_at, mac)
        VALUES (${idHash}, ${userId}, ${at}, ${expiresAt}, ${sso?.provider ?? null}, ${sso?.issuer ?? null}, ${sso?.subject ?? null}, ${sso?.sid ?? null},
          ${sso?.sealedRefreshToken ?? null}, ${sso?.sealedIdToken ?? null}, ${sso?.refreshAt ?? null}, ${mac})`);
    });
    return { token, expiresAt };
  }

  async ssoSessionOf(token: string): Promise<SsoSessionRow | undefined> {
    return this.ssoSessionByHash(this.check.seal().secretHash(token));
  }

  async ssoSessionByHash(idHash: string): Promise<SsoSessionRow | undefined> {
    return this.db.one<SsoSessionRow>(sql`
      SELECT ${SSO_SESSION_COLUMNS} FROM sessions s JOIN users u ON u.id = s.user_id
      WHERE s.id_hash = ${idHash} AND s.sso_provider IS NOT NULL AND s.expires_at > ${now()}`);
  }

  async claimSsoRefresh(idHash: string, due: number, until: number): Promise<boolean> {
    return (await this.db.run(sql`UPDATE sessions SET sso_refresh_at = ${until} WHERE id_hash = ${idHash} AND sso_refresh_at = ${due}`)) === 1;
  }

  async refreshedSsoSession(idHash: string, sealedRefreshToken: string | null, sealedIdToken: string | null, nextAt: number): Promise<void> {
    await this.db.run(sql`
      UPDATE sessions SET sso_refresh_token = COALESCE(${sealedRefreshToken}, sso_refresh_token), sso_id_token = COALESCE(${sealedIdToken}, sso_id_token), sso_refresh_at = ${nextAt}
      WHERE id_hash = ${idHash}`);
  }

  async deleteSessionByHash(idHash: string): Promise<string[]> {
    return this.endSessions(sql`id_hash = ${idHash}`);
  }

  async endUserSessions(username: string): Promise<string[]> {
    return this.endSessions(sql`user_id IN (SELECT id FROM users WHERE ${nameIs(this.db.dialect, username)})`);
  }

  async endSsoSessions(issuer: string, token: LogoutTokenTaken): Promise<string[] | null> {
    // A logout token naming both ends the sessions matching both; one naming either ends every session matching it.
    const bySid = token.sid !== null ? sql` AND sso_sid = ${token.sid}` : sql``;
    const bySubject = token.subject !== null ? sql` AND sso_subject = ${token.subject}` : sql``;
    const named = token.sid !== null || token.subject !== null;
    // At the token's precision, whole seconds: a session begun within the second of its iat is not begun after it.
    const where = sql`sso_issuer = ${issuer}${bySid}${bySubject} AND created_at < ${Math.floor(token.issuedAt) + 1}`;
    return this.db.transaction(function* (tx) {
      // The primary key decides: the first to insert the jti takes the token; the jti and the sessions' end commit
      // together, so a token whose sessions could not be ended is not spent (the provider may send it again).
      const taken = yield* tx.one(sql`
        INSERT INTO sso_logout_tokens (issuer, jti, expires_at) VALUES (${issuer}, ${token.jti}, ${token.keepUntil})
        ON CONFLICT DO NOTHING RETURNING jti`);
      if (taken === undefined) return null;
      if (!named) return [];
      const rows = yield* tx.all<{ username: string }>(sql`
        DELETE FROM sessions WHERE ${where} RETURNING (SELECT username FROM users u WHERE u.id = sessions.user_id) AS "username"`);
      return rows.map((r) => r.username);
    });
  }

  async sweepLogoutTokens(at = now()): Promise<number> {
    return this.db.run(sql`DELETE FROM sso_logout_tokens WHERE expires_at < ${at}`);
  }

  /** Delete the sessions `where` says; the usernames they were. */
  private async endSessions(where: SQL): Promise<string[]> {
    const rows = await this.db.all<{ username: string }>(sql`
      DELETE FROM sessions WHERE ${where} RETURNING (SELECT username FROM users u WHERE u.id = sessions.user_id) AS "username"`);
    return rows.map((r) => r.username);
  }

  setSessionRefresher(refresher: SessionRefresher): void {
    this.refresher = refresher;
  }

  async issueToken(owner: TokenOwner, name: string, options: TokenOptions = {}, by = 'system'): Promise<IssuedToken> {
    const at = now();
    const role = 'agent' in owner ? 'agent' : (await this.findUser(owner.username))?.role;
    if (!role) throw new AppError('NOT_FOUND', `There is no user "${(owner as { username: string }).username}".`);
    const scopes = options.scopes ?? defaultScopes(role);
    assertScopes(role, scopes);
    const expiresAt = expiryOf(this.tokenPolicy(), options.expiresInSeconds, at);
    const token = randomToken('swt');
    const id = await this.addToken(token, owner, name, by, { scopes, expiresAt });
    return { token, id: id!, scopes, expiresAt };
  }

  async rotateToken(id: number, overlapSeconds: number, by = 'system'): Promise<RotatedToken> {
    if (!Number.isFinite(overlapSeconds) || overlapSeconds < 0) throw new AppError('BAD_REQUEST', 'The overlap is a duration of 0 or more (e.g. 24h).');
    const db = this.db;
    const at = now();
    const policy = this.tokenPolicy();
    const token = randomToken('swt');
    const seal = this.check.seal();
    const check = this.check;
    const out = await this.changing(function* (tx) {
      const old = yield* tx.one<ApiTokenRow>(sql`SELECT ${TOKEN_COLUMNS} FROM api_tokens WHERE id = ${id}${db.forUpdate}`);
      if (!old) throw new AppError('NOT_FOUND', `There is no token ${id}.`);
      // A token row without its seal is not a token: nothing of it is carried over.
      if (!tokenSealed(check, old.id, old)) throw new AppError('NOT_FOUND', `There is no token ${id}.`);
      if (old.revokedAt !== null) throw new AppError('CONFLICT', `Token ${id} was revoked: there is nothing to rotate.`);
      if (old.disabledAt !== null || (old.expiresAt !== null && old.expiresAt <= at)) throw new AppError('CONFLICT', `Token ${id} is ${old.disabledReason === 'inactive' ? 'disabled' : 'expired'}: issue a new one instead.`);
      // The new token lives as long as the profile allows, else as long as the old one was made to live.
      const life = old.expiresAt === null ? undefined : Math.max(1, old.expiresAt - old.createdAt);
      const expiresAt = expiryOf(policy, life, at);
      const scopes = parseScopes(old.scopes);
      const tokenHash = seal.secretHash(token);
      const mac = seal.token({ tokenHash, userId: old.userId, agentName: old.agentName, scopes: scopes.join(','), expiresAt });
      const row = yield* tx.one<{ id: number }>(sql`
        INSERT INTO api_tokens (token_hash, name, user_id, agent_name, created_at, scopes, expires_at, rotated_from, mac)
        VALUES (${tokenHash}, ${old.name}, ${old.userId}, ${old.agentName}, ${at}, ${scopes.join(',')}, ${expiresAt}, ${old.id}, ${mac}) RETURNING id`);
      const oldExpiresAt = Math.min(old.expiresAt ?? Infinity, at + overlapSeconds);
      const oldMac = seal.token({ ...old, expiresAt: oldExpiresAt });
      yield* tx.run(sql`UPDATE api_tokens SET expires_at = ${oldExpiresAt}, mac = ${oldMac} WHERE id = ${old.id}`);
      return { old, newId: Number(row!.id), scopes, expiresAt, oldExpiresAt };
    });
    const owner = await this.ownerOf(out.old);
    await this.onEvent({
      type: 'token.rotated',
      by,
      target: String(out.newId),
      detail: { old_id: id, new_id: out.newId, overlap_seconds: overlapSeconds, name: out.old.name, owner, scopes: out.scopes, expires_at: out.expiresAt, old_expires_at: out.oldExpiresAt },
    });
    return { token, id: out.newId, scopes: out.scopes, expiresAt: out.expiresAt, rotatedFrom: id, oldExpiresAt: out.oldExpiresAt };
  }

  async sweepTokens(options: { now?: number; keep?: string } = {}): Promise<TokenSweep> {
    const at = options.now ?? now();
    const inactiveDays = this.tokenPolicy().inactiveDays;
    const keep = options.keep ?? '';
    type Swept = Pick<ApiTokenRow, 'id' | 'name' | 'agentName' | 'userId' | 'expiresAt' | 'lastUsedAt' | 'createdAt'>;
    const returning = sql`RETURNING id, name, agent_name AS "agentName", user_id AS "userId", expires_at AS "expiresAt", last_used_at AS "lastUsedAt", created_at AS "createdAt"`;
    const swept = await this.db.transaction(function* (tx) {
      const expired = yield* tx.all<Swept>(sql`
        UPDATE api_tokens SET disabled_at = ${at}, disabled_reason = 'expired'
        WHERE revoked_at IS NULL AND disabled_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ${at} ${returning}`);
      const inactive =
        inactiveDays === undefined
          ? []
          : yield* tx.all<Swept>(sql`
              UPDATE api_tokens SET disabled_at = ${at}, disabled_reason = 'inactive'
              WHERE revoked_at IS NULL AND disabled_at IS NULL AND token_hash <> ${keep}
                AND COALESCE(last_used_at, created_at) < ${at - inactiveDays * 86_400} ${returning}`);
      // Only a pass that changed something tells the token caches (an idle pass every few seconds must not).
      if (expired.length + inactive.length > 0) yield* tx.publish(AUTH_CHANNEL);
      return { expired, inactive };
    });
    if (swept.expired.length + swept.inactive.length > 0) this.tokens.forget();
    for (const t of swept.expired) {
      await this.onEvent({ type: 'token.expired', by: 'system', target: String(t.id), detail: { name: t.name, owner: await this.ownerOf(t), expires_at: t.expiresAt } });
    }
    for (const t of swept.inactive) {
      await this.onEvent({ type: 'token.disabled', by: 'system', target: String(t.id), detail: { name: t.name, owner: await this.ownerOf(t), last_used_at: t.lastUsedAt, days: inactiveDays, reason: 'inactive' } });
    }
    return { expired: swept.expired.map((t) => Number(t.id)), disabled: swept.inactive.map((t) => Number(t.id)) };
  }

  /**
   * Seal the rows of a database from before seals (mac NULL): users and tokens get their seal, sessions end (their
   * people sign in again). Run once per installation, when the key folder has no record of it (App.sealLegacyCredentials):
   * a row written without a seal after that stays unusable. Returns how many of each.
   */
  async sealLegacy(): Promise<{ users: number; tokens: number; sessions: number }> {
    const seal = this.check.seal();
    return this.changing(function* (tx) {
      const users = (yield* tx.all<UserRow>(sql`SELECT ${USER_COLUMNS} FROM users WHERE mac IS NULL`)).map(userRow);
      for (const u of users) yield* tx.run(sql`UPDATE users SET mac = ${seal.user(u)} WHERE id = ${u.id} AND mac IS NULL`);
      const tokens = yield* tx.all<ApiTokenRow>(sql`SELECT ${TOKEN_COLUMNS} FROM api_tokens WHERE mac IS NULL`);
      for (const t of tokens) yield* tx.run(sql`UPDATE api_tokens SET mac = ${seal.token(t)} WHERE id = ${t.id} AND mac IS NULL`);
      const sessions = yield* tx.all<{ idHash: string }>(sql`DELETE FROM sessions WHERE mac IS NULL RETURNING id_hash AS "idHash"`);
      return { users: users.length, tokens: tokens.length, sessions: sessions.length };
    });
  }

  /**
   * Tokens and sessions stored before the pepper (the bare SHA-256 of the secret, lib/auth/seal.ts) take the keyed form
   * and a seal over it, at every start: only a row whose seal shows it genuine. One without its seal is left as it
   * is, and no lookup ever finds it (lookups use the keyed form alone).
   */
  async pepperLegacy(): Promise<{ tokens: number; sessions: number }> {
    const seal = this.check.seal();
    const bare = `${PEPPER_PREFIX}%`;
    const out = await this.db.transaction(function* (tx) {
      let tokens = 0;
      for (const t of yield* tx.all<ApiTokenRow>(sql`SELECT ${TOKEN_COLUMNS} FROM api_tokens WHERE token_hash NOT LIKE ${bare}`)) {
        if (!CredentialSeal.matches(t.mac, seal.token(t))) continue;
        const tokenHash = seal.pepper(t.tokenHash);
        yield* tx.run(sql`UPDATE api_tokens SET token_hash = ${tokenHash}, mac = ${seal.token({ ...t, tokenHash })} WHERE id = ${t.id} AND token_hash = ${t.tokenHash}`);
        tokens++;
      }
      let sessions = 0;
      type SessionSeal = { idHash: string; userId: number; expiresAt: number; mac: string | null };
      for (const s of yield* tx.all<SessionSeal>(sql`SELECT id_hash AS "idHash", user_id AS "userId", expires_at AS "expiresAt", mac FROM sessions WHERE id_hash NOT LIKE ${bare}`)) {
        if (!CredentialSeal.matches(s.mac, seal.session(s))) continue;
        const idHash = seal.pepper(s.idHash);
        yield* tx.run(sql`UPDATE sessions SET id_hash = ${idHash}, mac = ${seal.session({ ...s, idHash })} WHERE id_hash = ${s.idHash}`);
        sessions++;
      }
      if (tokens + sessions > 0) yield* tx.publish(AUTH_CHANNEL);
      return { tokens, sessions };
    });
    if (out.tokens + out.sessions > 0) this.tokens.forget();
    return out;
  }

  /** `agent:<name>`, or the name of the token's user (`user#<id>` when it is gone). */
  private async ownerOf(t: Pick<ApiTokenRow, 'agentName' | 'userId'>): Promise<string> {
    if (t.agentName) return `agent:${t.agentName}`;
    const row = t.userId === null ? undefined : await this.db.one<{ username: string }>(sql`SELECT username FROM users WHERE id = ${t.userId}`);
    return row?.username ?? `user#${t.userId}`;
  }

  /** Store a token's hash for its owner and record it; a token that exists already is left alone (ensureToken). */
  private async addToken(token: string, owner: TokenOwner, name: string, by: string, life: TokenLife): Promise<number | undefined> {
    const seal = this.check.seal();
    const id = await this.changing((tx) => insertToken(tx, seal, token, owner, name, life));
    if (id !== undefined) await this.onEvent(tokenCreated(id, name, owner, by, life));
    return id;
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

/**
 * A new user (`identity`: first seen through single sign-on); 409 when the name is taken in any case of its letters
 * (the unique index on the folded name decides, also between two servers creating it at once), or the person was
 * created by another sign-in at the same moment.
 */
function* insertUser(tx: TxRunner, seal: CredentialSeal, username: string, role: UserRole, password: string | undefined, identity?: SsoIdentity): TxSteps<UserRow> {
  const row = yield* tx.one<UserRow>(sql`
    INSERT INTO users (username, role, password_hash, created_at, issuer, subject)
    VALUES (${username}, ${role}, ${password ? hashPassword(password) : null}, ${now()}, ${identity?.issuer ?? null}, ${identity?.subject ?? null})
    ON CONFLICT DO NOTHING RETURNING ${USER_COLUMNS}`);
  if (!row) {
    // The name is taken, in this case or another (the unique index on the folded name), or the person was created
    // by another sign-in at the same moment.
    const holder = yield* tx.one<{ username: string }>(sql`SELECT username FROM users WHERE ${nameIs(tx.dialect, username)}`);
    throw new AppError(
      'CONFLICT',
      holder && holder.username !== username ? `User "${username}" already exists as "${holder.username}" (names are the same whatever the case of their letters).` : `User "${username}" already exists.`,
    );
  }
  // The seal covers the id, which the insert gave: written in the same transaction.
  const user = userRow(row);
  user.mac = seal.user(user);
  yield* tx.run(sql`UPDATE users SET mac = ${user.mac} WHERE id = ${user.id}`);
  return user;
}

/**
 * A change of one user's row, sealed anew: the row read under a lock, checked (a row without its seal is no user: 404),
 * changed by `change`, and written with its new seal. Returns the row as it was.
 */
function updateUser(db: SqlDatabase, check: SealCheck, username: string, change: (u: UserRow) => UserRow) {
  return function* (tx: TxRunner): TxSteps<UserRow> {
    const found = yield* tx.one<UserRow>(sql`SELECT ${USER_COLUMNS} FROM users WHERE ${nameIs(db.dialect, username)}${db.forUpdate}`);
    const before = found && userRow(found);
    if (!before || !userSealed(check, before)) throw new AppError('NOT_FOUND', `There is no user "${username}".`);
    const after = change(before);
    const mac = check.seal().user(after);
    yield* tx.run(sql`UPDATE users SET role = ${after.role}, password_hash = ${after.passwordHash}, mac = ${mac} WHERE id = ${before.id}`);
    return before;
  };
}

/** What a new token may do and until when. */
interface TokenLife {
  scopes: readonly TokenScope[];
  expiresAt: number | null;
}

/** A token's hash for its owner: its id, or undefined when this exact token exists already. */
function* insertToken(tx: TxRunner, seal: CredentialSeal, token: string, owner: TokenOwner, name: string, life: TokenLife): TxSteps<number | undefined> {
  let userId: number | null = null;
  if ('username' in owner) {
    const user = yield* tx.one<{ id: number }>(sql`SELECT id FROM users WHERE ${nameIs(tx.dialect, owner.username)}`);
    if (!user) throw new AppError('NOT_FOUND', `There is no user "${owner.username}".`);
    userId = user.id;
  }
  const agentName = 'agent' in owner ? owner.agent : null;
  const tokenHash = seal.secretHash(token);
  const scopes = life.scopes.join(',');
  const mac = seal.token({ tokenHash, userId, agentName, scopes, expiresAt: life.expiresAt });
  const row = yield* tx.one<{ id: number }>(sql`
    INSERT INTO api_tokens (token_hash, name, user_id, agent_name, created_at, scopes, expires_at, mac)
    VALUES (${tokenHash}, ${name}, ${userId}, ${agentName}, ${now()}, ${scopes}, ${life.expiresAt}, ${mac})
    ON CONFLICT (token_hash) DO NOTHING RETURNING id`);
  return row === undefined ? undefined : Number(row.id);
}

const userCreated = (user: UserRow, password: string | undefined, by: string): AuthEvent => ({
  type: 'user.created',
  by,
  target: user.username,
  detail: { role: user.role, password: password ? 'set' : 'none' },
});

const tokenCreated = (id: number, name: string, owner: TokenOwner, by: string, life: TokenLife): AuthEvent => ({
  type: 'token.created',
  by,
  target: String(id),
  detail: { name, owner: 'username' in owner ? owner.username : `agent:${owner.agent}`, scopes: life.scopes, expires_at: life.expiresAt },
});
