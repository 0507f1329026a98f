'use client';

import { useState } from 'react';
import { signedOutSchema } from '@/lib/http/responses';
import { apiPost } from '@/app/_lib/api-client';

export function SignOutButton() {
  const [busy, setBusy] = useState(false);
  async function signOut() {
    setBusy(true);
    let next = '/login';
    try {
      // A single sign-on session is ended at its provider too, which then sends the browser back to the login page.
      next = (await apiPost('/api/v1/auth/logout', undefined, signedOutSchema)).end_session_url ?? '/login';
    } catch {
      // Signed out already, or the server is away: the login page is where this ends either way.
    } finally {
      window.location.assign(next);
    }
  }
  return (
    <button type="button" className="button button-quiet" onClick={signOut} disabled={busy}>
      Sign out
    </button>
  );
}
