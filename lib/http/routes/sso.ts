/**
 * Single sign-on's routes (lib/sso): the browser is sent to the provider, comes back to the callback, and the provider
 * may end sessions over the back channel. Public by design (a person is not signed in yet; a provider has no session);
 * what protects them is the sealed flow cookie with state, nonce and PKCE, and the logout token's signature.
 */
import { z } from 'zod';
import { FLOW_COOKIE, FLOW_SECONDS } from '@/lib/sso/relying-party';
import { returnPath } from '../return-path';
import { SESSION_COOKIE, readCookie, requireRole, route, Reply, type ApiRequest } from '../route';

const providerParams = z.strictObject({ provider: z.string().regex(/^[a-z][a-z0-9-]{0,39}$/, 'a provider id of config/sso.yaml') });
const startQuery = z.object({ next: z.string().max(2000).optional() });

const isSecure = (request: Pick<ApiRequest, 'header'> & { url: string }) => new URL(request.url).protocol === 'https:' || request.header('x-forwarded-proto') === 'https';

/**
 * The flow cookie: HttpOnly, only sent back to this provider's callback, for ten minutes. SameSite=Lax, not Strict:
 * the browser returns to the callback from the provider's site, and a Strict cookie would stay behind.
 */
function flowCookie(provider: string, value: string, secure: boolean, maxAge = FLOW_SECONDS): string {
  return [`${FLOW_COOKIE}=${value}`, `Path=/api/v1/auth/sso/${provider}/`, 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAge}`, ...(secure ? ['Secure'] : [])].join('; ');
}

const refusedAt = (reason: string, provider: string) => `/login/refused?reason=${encodeURIComponent(reason)}&provider=${encodeURIComponent(provider)}`;

/** Begin signing in with a provider: 303 to its authorization endpoint, with the sign-in under way in a sealed cookie. */
export const startSso = route({ role: requireRole('anonymous'), params: providerParams, query: startQuery }, async ({ app, params, query, header, request, ip }) => {
  const begun = await app.sso.start(params.provider, returnPath(query.next, '/'), ip);
  if (!begun) return new Response(null, { status: 303, headers: { location: refusedAt('provider_error', params.provider), 'cache-control': 'no-store' } });
  const headers = new Headers({ location: begun.url, 'cache-control': 'no-store' });
  headers.append('set-cookie', flowCookie(params.provider, begun.cookie, isSecure({ header, url: request.url })));
  return new Response(null, { status: 303, headers });
});

/**
 * The provider's answer. Signed in: the session cookie is set and a small page moves on to where the person was
 * going (a page of this site navigating, so that the SameSite=Strict session cookie goes with it; a redirect straight
 * from the provider's navigation would leave it behind). Refused: 303 to the page that says why.
 */
export const ssoCallback = route({ role: requireRole('anonymous'), params: providerParams }, async ({ app, params, header, request, ip }) => {
  const secure = isSecure({ header, url: request.url });
  const outcome = await app.sso.callback(params.provider, new URL(request.url), readCookie({ header }, FLOW_COOKIE), ip);
  const headers = new Headers({ 'cache-control': 'no-store' });
  headers.append('set-cookie', flowCookie(params.provider, '', secure, 0));
  if (!outcome.ok) {
    headers.set('location', refusedAt(outcome.reason, outcome.provider));
    return new Response(null, { status: 303, headers });
  }
  const maxAge = Math.max(1, Math.floor(outcome.expiresAt - Date.now() / 1000));
  headers.append('set-cookie', [`${SESSION_COOKIE}=${outcome.token}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${maxAge}`, ...(secure ? ['Secure'] : [])].join('; '));
  headers.set('content-type', 'text/html; charset=utf-8');
  headers.set('referrer-policy', 'no-referrer');
  // Judged again as it comes out of the sealed flow: the page below must never move the browser to another site.
  const next = escapeHtml(returnPath(outcome.next, '/'));
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${next}"><title>Signed in</title></head><body><p>Signed in. <a href="${next}">Continue</a></p></body></html>`;
  return new Response(page, { status: 200, headers });
});

/** The provider ends sessions: a signed logout token (form field logout_token) naming a session (sid) or a person (sub). */
export const ssoBackchannelLogout = route({ role: requireRole('anonymous'), params: providerParams }, async ({ app, params, request, ip }) => {
  const text = await request.text();
  if (text.length > 16 * 1024) return new Reply({ error: 'invalid_request', error_description: 'The body is too large.' }, { status: 413 });
  const token = new URLSearchParams(text).get('logout_token');
  if (!token) return new Reply({ error: 'invalid_request', error_description: 'Send logout_token as application/x-www-form-urlencoded.' }, { status: 400 });
  const { ended } = await app.sso.backchannelLogout(params.provider, token, ip);
  return { ended };
});

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
