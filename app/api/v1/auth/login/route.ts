import { passwordLogin, sessionCookieHeader } from '@/lib/auth/login';
import { errorResponse, requireRole, route } from '@/lib/http/route';
import { loginBodySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/** Sign in with user name and password; sets an HttpOnly, SameSite=Strict session cookie. */
export const POST = route({ role: requireRole('anonymous'), body: loginBodySchema }, async ({ app, body, request, ip }) => {
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
