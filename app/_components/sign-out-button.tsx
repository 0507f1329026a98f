'use client';

import { useState } from 'react';

export function SignOutButton() {
  const [busy, setBusy] = useState(false);
  async function signOut() {
    setBusy(true);
    try {
      await fetch('/api/v1/auth/logout', { method: 'POST' });
    } finally {
      window.location.assign('/login');
    }
  }
  return (
    <button type="button" className="button button-quiet" onClick={signOut} disabled={busy}>
      Sign out
    </button>
  );
}
