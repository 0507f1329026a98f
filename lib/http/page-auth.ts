/**
 * Sign-in for console pages (server components): the same session as the API, the same engine decision.
 * No session: redirect to the login and back. Too low a role: a recorded denial and a 403 page.
 */
import { cookies, headers } from 'next/headers';
import { forbidden, redirect } from 'next/navigation';
import { getApp, type App } from '@/lib/app';
import type { Principal, Role } from '@/lib/permissions';
import { forwardedClientAddress } from './client-address';
import { returnPath } from './return-path';
import { SESSION_COOKIE } from './route';

export async function currentPrincipal(): Promise<{ app: App; principal: Principal | undefined }> {
  const app = await getApp();
  const token = (await cookies()).get(SESSION_COOKIE)?.value;
  return { app, principal: token ? await app.auth.principalForSession(token) : undefined };
}

/** The path (with query) the browser asked for, as passed on by proxy.ts. */
export async function requestedPath(fallback: string): Promise<string> {
  return returnPath((await headers()).get('x-swarm-path'), fallback);
}

/** The signed-in principal of a console page, or a redirect to the login that comes back to this page. */
export async function requireSignedIn(fallbackPath: string): Promise<{ app: App; principal: Principal }> {
  const { app, principal } = await currentPrincipal();
  if (!principal) redirect(`/login?next=${encodeURIComponent(await requestedPath(fallbackPath))}`);
  return { app, principal };
}

/**
 * The principal of a console page that needs `role`. A refusal is recorded as a denial (engine.decide) and answered
 * with HTTP 403: forbidden() renders app/(console)/forbidden.tsx with that status.
 */
export async function requirePage(path: string, role: Role): Promise<{ app: App; principal: Principal }> {
  const { app, principal } = await requireSignedIn(path);
  const h = await headers();
  const ip = forwardedClientAddress((name) => h.get(name));
  const decision = await app.decisions.decide({ kind: 'http', principal, method: 'GET', path, requiredRole: role }, { ip });
  if (decision.decision !== 'ALLOW') forbidden();
  return { app, principal };
}
