'use server';

import { cookies, headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { getApp } from '@/lib/app';
import { passwordLogin, sessionCookie } from '@/lib/auth/login';
import { forwardedClientAddress } from '@/lib/http/client-address';
import { SESSION_COOKIE } from '@/lib/http/route';
import { returnPath } from '@/lib/http/return-path';
import { loginBodySchema } from '@/lib/http/schemas';
import { ANONYMOUS } from '@/lib/permissions';

export interface SignInState {
  error: string | null;
  /** the user name typed, so a failed attempt does not clear it */
  username: string;
  /** failed attempts so far: the password field starts empty (and focused) after each */
  attempt: number;
}

/**
 * The sign-in form's action. A server action, so the form posts (never a GET with the password in the address) and
 * works even when it is sent before the page's JavaScript has loaded. The same checks, throttle and audit events as
 * `POST /api/v1/auth/login`; on success the browser goes on to the page it came for.
 */
export async function signIn(previous: SignInState, form: FormData): Promise<SignInState> {
  const raw = { username: form.get('username'), password: form.get('password') };
  const username = typeof raw.username === 'string' ? raw.username : '';
  const failed = (error: string): SignInState => ({ error, username, attempt: previous.attempt + 1 });
  const parsed = loginBodySchema.safeParse(raw);
  if (!parsed.success) return failed('Enter your user name and password.');
  const rawNext = form.get('next');
  const next = returnPath(typeof rawNext === 'string' ? rawNext : undefined, '/');
  const h = await headers();
  // The address the decision listener resolved (lib/http/client-address.ts), as for the login API.
  const ip = forwardedClientAddress((name) => h.get(name));
  try {
    const app = await getApp();
    // The engine decides this endpoint like every other: an operator policy may close sign-in (by address, say).
    const decision = await app.decisions.decide({ kind: 'http', principal: ANONYMOUS, method: 'POST', path: '/login', requiredRole: 'anonymous' }, { ip });
    if (decision.decision !== 'ALLOW') return failed(`Sign-in is refused: ${decision.reason}`);
    const login = await passwordLogin(app, parsed.data, ip);
    if (!login.ok) return failed(login.message);
    const secure = h.get('x-forwarded-proto') === 'https' || (h.get('origin') ?? '').startsWith('https:');
    (await cookies()).set(SESSION_COOKIE, login.token, sessionCookie(secure));
  } catch (error) {
    console.error('Sign-in failed on the server', error);
    return failed('The server could not sign you in just now (it has been logged). Try again in a moment.');
  }
  redirect(next);
}
