'use client';

import { useActionState } from 'react';
import { signIn, type SignInState } from './actions';

export function LoginForm({ next }: { next: string }) {
  const [state, action, busy] = useActionState<SignInState, FormData>(signIn, { error: null, username: '' });
  return (
    <form action={action} className="form">
      <input type="hidden" name="next" value={next} />
      <label htmlFor="username">User name</label>
      <input id="username" name="username" autoComplete="username" required autoFocus defaultValue={state.username} />
      <label htmlFor="password">Password</label>
      <input id="password" name="password" type="password" autoComplete="current-password" required />
      {state.error ? (
        <p role="alert" className="form-error">
          {state.error}
        </p>
      ) : null}
      <button type="submit" className="button button-primary" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}
