'use client';

import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { meSchema } from '@/lib/http/responses';
import { apiGet } from '@/app/_lib/api-client';

/**
 * The console's one place that knows whether the person is still signed in. Every console page shares it (it is
 * mounted by app/(console)/layout.tsx), so an ended or expired session is said the same way everywhere, at once:
 *
 * - any fetch of the console's own API that answers 401 ends the session here (the watch observes window.fetch; it
 *   never changes a request or its answer), so a page's poll or a click finds out on its first refused request;
 * - pages that do not poll learn it from a session check (GET /api/v1/auth/me) when the tab is shown or focused
 *   again, and every SESSION_CHECK_MS.
 *
 * Pages read `useSession().ended` to stop polling and to disable what would fail (app/(console)/approvals does).
 */

/** how often the session is checked while the tab is visible; a page's own 401 is noticed at once */
const SESSION_CHECK_MS = 30_000;

interface SessionState {
  /** true once the server refused this browser's session */
  ended: boolean;
  /** when it was noticed (ms since the epoch), for "as of" wording */
  endedAt: number | null;
  /** for a page that saw a 401 by other means */
  markEnded: () => void;
}

const SessionContext = createContext<SessionState>({ ended: false, endedAt: null, markEnded: () => undefined });

export const useSession = (): SessionState => useContext(SessionContext);

/** The console's own API, where a 401 means this browser's session (the sign-in form's own 401 is not a session). */
function isSessionRequest(input: RequestInfo | URL): boolean {
  const raw = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  let url: URL;
  try {
    url = new URL(raw, window.location.href);
  } catch {
    return false;
  }
  return url.origin === window.location.origin && url.pathname.startsWith('/api/') && !url.pathname.startsWith('/api/v1/auth/login');
}

/** Where "Sign in again" goes: the login page, told to come back to this exact view (path and query). */
export function signInAgainHref(): string {
  return `/login?next=${encodeURIComponent(window.location.pathname + window.location.search)}`;
}

export function SessionWatch({ principalId, children }: { principalId: string; children: ReactNode }) {
  const [endedAt, setEndedAt] = useState<number | null>(null);
  const markEnded = useCallback(() => setEndedAt((t) => t ?? Date.now()), []);

  useEffect(() => {
    const original = window.fetch;
    const watched: typeof window.fetch = async (input, init) => {
      const res = await original(input, init);
      if (res.status === 401 && isSessionRequest(input)) markEnded();
      return res;
    };
    window.fetch = watched;
    return () => {
      // only undo our own wrapper (another one may have been put on top since)
      if (window.fetch === watched) window.fetch = original;
    };
  }, [markEnded]);

  useEffect(() => {
    let stopped = false;
    const check = async () => {
      if (document.visibilityState === 'hidden') return;
      try {
        const me = await apiGet('/api/v1/auth/me', meSchema, { background: true });
        // signed in again in another tab as the same person: this page is live again
        if (!stopped && me.id === principalId) setEndedAt(null);
      } catch {
        // A 401 is noticed by the fetch watch above; offline or the server restarting is not a statement about the
        // session: the next check tells.
      }
    };
    const onVisible = () => {
      if (document.visibilityState === 'visible') void check();
    };
    const timer = setInterval(check, SESSION_CHECK_MS);
    window.addEventListener('focus', check);
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      stopped = true;
      clearInterval(timer);
      window.removeEventListener('focus', check);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [principalId]);

  const value = useMemo(() => ({ ended: endedAt !== null, endedAt, markEnded }), [endedAt, markEnded]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

/** The banner every console page shows once the session has ended: what it means, and a way back to this view. */
export function SessionBanner() {
  const { ended, endedAt } = useSession();
  const [href, setHref] = useState('/login');
  useEffect(() => {
    if (ended) setHref(signInAgainHref());
  }, [ended]);
  if (!ended) return null;
  // UTC, as every time in the console (app/_components/time.tsx)
  const at = endedAt ? `${new Date(endedAt).toISOString().slice(11, 19)} UTC` : null;
  return (
    <div className="session-banner" role="alert" data-testid="session-ended">
      <strong>You are signed out.</strong> Your session has ended{at ? ` (noticed at ${at})` : ''}: this page no longer updates, and
      nothing can be approved or changed from it.{' '}
      <a
        href={href}
        className="session-banner-link"
        // the view may have changed (a filter) since the banner appeared: take the address at the moment of the click
        onClick={(e) => {
          e.currentTarget.href = signInAgainHref();
        }}
      >
        Sign in again
      </a>{' '}
      to come back to this view.
    </div>
  );
}
