import { requireRole, route, SESSION_COOKIE } from '@/lib/http/route';

export const dynamic = 'force-dynamic';

/** Sign out: the session is deleted on the server and the cookie cleared. */
export const POST = route({ role: requireRole('viewer') }, async ({ app, request, principal, ip }) => {
  const cookie = request.headers.get('cookie') ?? '';
  const m = new RegExp(`(?:^|;\\s*)${SESSION_COOKIE}=([^;]+)`).exec(cookie);
  if (m) await app.auth.deleteSession(decodeURIComponent(m[1]!));
  await app.recorder.record({ kind: 'auth', type: 'auth.logout', actor: principal.id, actorRole: principal.role, outcome: 'succeeded', target: principal.id, ip: ip ?? null });
  return Response.json(
    { signed_out: true },
    { headers: { 'set-cookie': `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`, 'cache-control': 'no-store' } },
  );
});
