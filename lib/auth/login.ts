/**
 * Signing in with a user name and password, one way for the sign-in form (a server action, which works before the
 * page's JavaScript has loaded) and for `POST /api/v1/auth/login`: the same throttle, the same audit events, the
 * same session cookie.
 */
import type { App } from '@/lib/app';
import { SESSION_COOKIE } from '@/lib/http/route';
import { SESSION_TTL_SECONDS } from './store';
import { foldUserName } from './user-name';

/** Never says which part was wrong. */
export const WRONG_CREDENTIALS = 'The user name or password is not correct.';
/**
 * While passwords are off but for the break-glass administrator (config/sso.yaml or a profile, local_login:
 * break_glass): the words of every refused password, whoever the name, so that the one name a password still works
 * for cannot be learned by trying names.
 */
export const WRONG_CREDENTIALS_BREAK_GLASS =
  'The user name or password is not correct. Passwords are turned off here but for the break-glass administrator: everyone else signs in with the organisation\'s single sign-on.';
/** Attempts for one user name are taken one at a time, on every server (lib/auth/attempts.ts). */
export const ATTEMPT_UNDER_WAY = 'Other sign-ins for this user name are under way; wait for their answers, then try again.';
/**
 * Attempts for one user name that wait, in this process, for the one under way: a person signing in from two tabs
 * waits a moment instead of being refused. More are refused at once (as an attempt under way in another process
 * is), so guessing in parallel gains nothing and holds no more than this many requests open per name.
 */
export const MAX_WAITING_ATTEMPTS = 2;

/** While a user name is locked: the same words whatever password was sent (none is checked). */
export function lockedMessage(until: number): string {
  return `This user name is locked after too many failed sign-ins, until ${new Date(until * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC. Try again then, or ask an administrator to unlock it (swarm users unlock NAME).`;
}

export type PasswordLogin =
  | { ok: true; user: { username: string; role: string }; token: string; expiresAt: number }
  | {
      ok: false;
      /**
       * 401 refused credentials (a wrong password, or passwords off for this name: the same answer); 429 while the name
       * is locked or another attempt for it is under way
       */
      status: 401 | 429;
      code: 'UNAUTHENTICATED' | 'ACCOUNT_LOCKED' | 'TOO_MANY_REQUESTS';
      message: string;
      /** when to try again (Retry-After), for a 429 */
      retryAfterSeconds?: number;
    };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The attempts of this process per user name: the last one's end, and how many wait behind the one under way. */
const turns = new Map<string, { last: Promise<unknown>; waiting: number }>();

/** Run `attempt` after the attempts of this process for the same name; undefined when too many wait already. */
function inTurn<T>(userKey: string, attempt: () => Promise<T>): Promise<T> | undefined {
  let turn = turns.get(userKey);
  if (!turn) turns.set(userKey, (turn = { last: Promise.resolve(), waiting: -1 }));
  if (turn.waiting >= MAX_WAITING_ATTEMPTS) return undefined;
  turn.waiting++;
  const t = turn;
  const mine = t.last.then(attempt);
  // The next attempt waits for this one's end, whatever it was (never a rejection left unhandled).
  const done = () => {
    t.waiting--;
    if (t.waiting < 0 && turns.get(userKey) === t) turns.delete(userKey);
  };
  t.last = mine.then(done, done);
  return mine;
}

/**
 * Check the credentials and open a session. Attempts for one user name are taken one at a time, across every process
 * on the database: in this process a few wait for their turn, more are refused (429), and so is one while an attempt
 * in another process is under way; each waits first for the delay its failures so far set (per user name, and per
 * client address: lib/http/client-address.ts); so concurrent guesses cannot share one delay. A compliance profile with a `sign_in` lock (bfsi: 10 failures, 30 minutes; PCI DSS 8.3.4) locks the user name
 * after that many failures in a row, recorded as `auth.locked`; while it is locked no password is checked and every
 * attempt is refused with the same answer. With local_login: break_glass a password works only for the break-glass
 * administrator, yet every name goes the same way (turn, lock, delay, a password hash checked) and every refusal has
 * the same status and words, so neither the answer nor its time tells which name that is; the trail has the real
 * reason (auth.sso.refused, password_login_off). Every outcome is recorded in the audit trail; a trail that cannot be
 * written throws.
 */
export async function passwordLogin(app: App, credentials: { username: string; password: string }, ip: string | undefined): Promise<PasswordLogin> {
  // One name whatever its case (lib/auth/user-name.ts): "ADMIN" and "admin" share one turn, delay and lock.
  const userKey = `user:${foldUserName(credentials.username)}`;
  const turn = inTurn(userKey, () => attempt(app, credentials, userKey, ip));
  if (turn) return turn;
  await failedAttempt(app, credentials.username, ip, 'refused', 'other attempts for this user name were under way');
  return UNDER_WAY;
}

/** The words of a refused password: one sentence for every name (while passwords are off, one that says so). */
const refusedCredentials = (app: App) => (app.sso.localLogin === 'break_glass' ? WRONG_CREDENTIALS_BREAK_GLASS : WRONG_CREDENTIALS);

const UNDER_WAY: PasswordLogin = { ok: false, status: 429, code: 'TOO_MANY_REQUESTS', message: ATTEMPT_UNDER_WAY, retryAfterSeconds: 1 };

/** A sign-in that did not succeed, in the trail: refused without checking its password, or failed on it. */
async function failedAttempt(app: App, username: string, ip: string | undefined, outcome: 'refused' | 'failed', reason: string, detail: Record<string, unknown> = {}): Promise<void> {
  const name = username.slice(0, 64);
  await app.recorder.record({ kind: 'auth', type: 'auth.login.failed', actor: name, outcome, target: name, ip: ip ?? null, detail: { reason, ...detail } });
}

/** One attempt, in its turn in this process: the database's turn (other processes), the lock, the delay, the check. */
async function attempt(app: App, credentials: { username: string; password: string }, userKey: string, ip: string | undefined): Promise<PasswordLogin> {
  const { username, password } = credentials;
  const otherKeys = ip ? [`ip:${ip}`] : [];
  const policy = app.profiles.lockout;
  const name = username.slice(0, 64);
  const refused = (reason: string, detail: Record<string, unknown> = {}) => failedAttempt(app, username, ip, 'refused', reason, detail);

  const now = Date.now() / 1000;
  const start = await app.loginAttempts.start(userKey, otherKeys, now, policy);
  if (start.kind === 'locked') {
    await refused('user name locked after failed sign-ins', { locked_until: new Date(start.until * 1000).toISOString() });
    return { ok: false, status: 429, code: 'ACCOUNT_LOCKED', message: lockedMessage(start.until), retryAfterSeconds: Math.max(1, Math.ceil(start.until - now)) };
  }
  if (start.kind === 'busy') {
    await refused('an attempt for this user name was under way on another process');
    return UNDER_WAY;
  }
  let settled = false;
  try {
    if (start.delayMs > 0) await sleep(start.delayMs);
    // Whether a password may sign this name in at all is asked only now, and the password is checked either way: a
    // name refused for it takes the path and the time of a wrong password.
    const allowed = app.sso.passwordAllowed(username);
    const found = await app.auth.verifyLogin(username, password);
    const user = allowed ? found : undefined;
    if (!user) {
      const failure = await app.loginAttempts.failed(userKey, otherKeys, Date.now() / 1000, policy);
      settled = true;
      if (allowed) await failedAttempt(app, username, ip, 'failed', 'wrong user name or password', { throttled_ms: start.delayMs });
      else await app.recorder.record({ kind: 'auth', type: 'auth.sso.refused', actor: name, outcome: 'refused', target: name, ip: ip ?? null, detail: { reason: 'password_login_off', username: name, throttled_ms: start.delayMs } });
      const refusal = refusedCredentials(app);
      if (failure.lockedUntil === null || !policy) return { ok: false, status: 401, code: 'UNAUTHENTICATED', message: refusal };
      await app.recorder.record({
        kind: 'auth',
        type: 'auth.locked',
        actor: 'system',
        outcome: 'succeeded',
        target: name,
        ip: ip ?? null,
        detail: {
          reason: `${policy.afterFailures} failed sign-ins in a row`,
          locked_until: new Date(failure.lockedUntil * 1000).toISOString(),
          lock_minutes: policy.lockSeconds / 60,
          profiles: policy.profiles,
        },
      });
      return { ok: false, status: 401, code: 'UNAUTHENTICATED', message: `${refusal} ${lockedMessage(failure.lockedUntil)}` };
    }
    await app.loginAttempts.succeeded(userKey);
    settled = true;
    const session = await app.auth.createSession(user.id);
    await app.recorder.record({ kind: 'auth', type: 'auth.login.succeeded', actor: user.username, actorRole: user.role, outcome: 'succeeded', target: user.username, ip: ip ?? null });
    // While passwords are off for everyone else, each use of the break-glass account is a security event of its own.
    if (app.sso.localLogin === 'break_glass') {
      await app.recorder.record({ kind: 'auth', type: 'auth.break_glass', actor: user.username, actorRole: user.role, outcome: 'succeeded', target: user.username, ip: ip ?? null, detail: { via: 'password' } });
    }
    return { ok: true, user: { username: user.username, role: user.role }, token: session.token, expiresAt: session.expiresAt };
  } finally {
    // An attempt that ended without an outcome (the database failed under it) frees the name for the next one.
    if (!settled) await app.loginAttempts.release(userKey);
  }
}

/** An administrator lifts the lock of a user name (and forgets its failures); recorded as auth.unlocked. */
export async function unlockUserName(app: App, username: string, by: string): Promise<boolean> {
  const wasLocked = await app.loginAttempts.unlock(`user:${foldUserName(username)}`, Date.now() / 1000);
  await app.recorder.record({ kind: 'auth', type: 'auth.unlocked', actor: by, outcome: 'succeeded', target: username.slice(0, 64), detail: { was_locked: wasLocked } });
  return wasLocked;
}

/** The session cookie's attributes: HttpOnly, SameSite=Strict, for the session's lifetime, Secure over HTTPS. */
export function sessionCookie(secure: boolean) {
  return { path: '/', httpOnly: true, sameSite: 'strict', maxAge: SESSION_TTL_SECONDS, secure } as const;
}

/** The same cookie as a Set-Cookie header value. */
export function sessionCookieHeader(token: string, secure: boolean): string {
  const c = sessionCookie(secure);
  return [`${SESSION_COOKIE}=${token}`, `Path=${c.path}`, 'HttpOnly', 'SameSite=Strict', `Max-Age=${c.maxAge}`, ...(secure ? ['Secure'] : [])].join('; ');
}
