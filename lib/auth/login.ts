/**
 * Signing in with a user name and password, one way for the sign-in form (a server action, which works before the
 * page's JavaScript has loaded) and for `POST /api/v1/auth/login`: the same throttle, the same audit events, the
 * same session cookie.
 */
import type { App } from '@/lib/app';
import { SESSION_COOKIE } from '@/lib/http/route';
import { SESSION_TTL_SECONDS } from './store';

/** Never says which part was wrong. */
export const WRONG_CREDENTIALS = 'The user name or password is not correct.';

export type PasswordLogin =
  | { ok: true; user: { username: string; role: string }; token: string; expiresAt: number }
  | { ok: false; message: string };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Check the credentials and open a session. Failures are throttled per user name always, and per client address only
 * when a proxy tells us the address (otherwise every client would share one key, and one attacker could slow
 * everybody's sign-in). Both outcomes are recorded in the audit trail; a trail that cannot be written throws.
 */
export async function passwordLogin(app: App, credentials: { username: string; password: string }, ip: string | undefined): Promise<PasswordLogin> {
  const { username, password } = credentials;
  const keys = [`user:${username.toLowerCase()}`, ...(ip ? [`ip:${ip}`] : [])];
  const delay = app.loginThrottle.delayFor(keys);
  if (delay > 0) await sleep(delay);
  const user = await app.auth.verifyLogin(username, password);
  if (!user) {
    app.loginThrottle.failure(keys);
    await app.recorder.record({
      kind: 'auth',
      type: 'auth.login.failed',
      actor: username.slice(0, 64),
      outcome: 'failed',
      target: username.slice(0, 64),
      ip: ip ?? null,
      detail: { reason: 'wrong user name or password', throttled_ms: delay },
    });
    return { ok: false, message: WRONG_CREDENTIALS };
  }
  app.loginThrottle.success([keys[0]!]);
  const session = await app.auth.createSession(user.id);
  await app.recorder.record({ kind: 'auth', type: 'auth.login.succeeded', actor: user.username, actorRole: user.role, outcome: 'succeeded', target: user.username, ip: ip ?? null });
  return { ok: true, user: { username: user.username, role: user.role }, token: session.token, expiresAt: session.expiresAt };
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
