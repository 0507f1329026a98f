/** Console sessions: sign in, sign out, and who the request is authenticated as. */
import { passwordLogin, sessionCookieHeader } from '@/lib/auth/login';
import { errorResponse, readCookie, requireRole, route, SESSION_COOKIE } from '../route';
import { loginBodySchema } from '../schemas';

/** Sign in with user name and password; sets an HttpOnly, SameSite=Strict session cookie. */
export const signIn = route({ role: requireRole('anonymous'), body: loginBodySchema }, async ({ app, body, request, ip }) => {
  const login = await passwordLogin(app, body, ip);
  if (!login.ok) {
    const refused = errorResponse(login.status, login.code, login.message);
    if (login.retryAfterSeconds !== undefined) refused.headers.set('retry-after', String(login.retryAfterSeconds));
    return refused;
  }
  const secure = new URL(request.url).protocol === 'https:' || request.headers.get('x-forwarded-proto') === 'https';
  return Response.json(
    { user: login.user, expires_at: login.expiresAt },
    { headers: { 'set-cookie': sessionCookieHeader(login.token, secure), 'cache-control': 'no-store' } },
  );
});

/** Sign out: the session is deleted on the server and the cookie cleared; an SSO session's answer says where it ends at the provider. */
export const signOut = route({ role: requireRole('viewer'), scope: 'none' }, async ({ app, header, principal, ip }) => {
  const session = readCookie({ header }, SESSION_COOKIE);
  // A single sign-on session ends at its provider too: the browser is sent to its end_session_endpoint (RP-initiated).
  const endSessionUrl = session ? await app.sso.endSessionUrlFor(session) : null;
  if (session) await app.auth.deleteSession(session);
  await app.recorder.record({ kind: 'auth', type: 'auth.logout', actor: principal.id, actorRole: principal.role, outcome: 'succeeded', target: principal.id, ip: ip ?? null, ...(endSessionUrl ? { detail: { via: 'rp' } } : {}) });
  return Response.json(
    { signed_out: true, ...(endSessionUrl ? { end_session_url: endSessionUrl } : {}) },
    { headers: { 'set-cookie': `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`, 'cache-control': 'no-store' } },
  );
});

/** Who the request is authenticated as. */
export const whoAmI = route({ role: requireRole('viewer'), scope: 'none' }, ({ principal }) => ({
  kind: principal.kind,
  id: principal.id,
  role: principal.role,
  agent: principal.agent ?? null,
}));
