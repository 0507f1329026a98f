import { loginThrottle } from '@/lib/auth/throttle';
import { SESSION_TTL_SECONDS } from '@/lib/auth/store';
import { errorResponse, requireRole, route, SESSION_COOKIE } from '@/lib/http/route';
import { loginBodySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sign in with user name and password; sets an HttpOnly, SameSite=Strict session cookie. */
export const POST = route({ role: requireRole('anonymous'), body: loginBodySchema }, async ({ app, body, request, ip: address }) => {
  // Per user name always; per client address only when a proxy tells us the address (otherwise every client would
  // share one key, and one attacker could slow everybody's sign-in).
  const keys = [`user:${body.username.toLowerCase()}`, ...(address ? [`ip:${address}`] : [])];
  const delay = loginThrottle.delayFor(keys);
  if (delay > 0) await sleep(delay);
  const user = await app.auth.verifyLogin(body.username, body.password);
  if (!user) {
    loginThrottle.failure(keys);
    await app.recorder.record({
      kind: 'auth',
      type: 'auth.login.failed',
      actor: body.username.slice(0, 64),
      outcome: 'failed',
      target: body.username.slice(0, 64),
      ip: address ?? null,
      detail: { reason: 'wrong user name or password', throttled_ms: delay },
    });
    // Never say which part was wrong.
    return errorResponse(401, 'UNAUTHENTICATED', 'The user name or password is not correct.');
  }
  loginThrottle.success([keys[0]!]);
  const session = await app.auth.createSession(user.id);
  await app.recorder.record({ kind: 'auth', type: 'auth.login.succeeded', actor: user.username, actorRole: user.role, outcome: 'succeeded', target: user.username, ip: address ?? null });
  const secure = new URL(request.url).protocol === 'https:' || request.headers.get('x-forwarded-proto') === 'https';
  const cookie = [
    `${SESSION_COOKIE}=${session.token}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${SESSION_TTL_SECONDS}`,
    ...(secure ? ['Secure'] : []),
  ].join('; ');
  return Response.json(
    { user: { username: user.username, role: user.role }, expires_at: session.expiresAt },
    { headers: { 'set-cookie': cookie, 'cache-control': 'no-store' } },
  );
});
