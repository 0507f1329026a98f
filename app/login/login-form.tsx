'use client';

import { useActionState } from 'react';
import { signIn, type SignInState } from './actions';

export function LoginForm({ next }: { next: string }) {
  const [state, action, busy] = useActionState<SignInState, FormData>(signIn, { error: null, username: '', attempt: 0 });
  return (
    <form action={action} className="form">
      <input type="hidden" name="next" value={next} />
      <label htmlFor="username">User name</label>
      <input id="username" name="username" autoComplete="username" required autoFocus={state.attempt === 0} defaultValue={state.username} />
      <label htmlFor="password">Password</label>
      {/* a new field after each failed attempt: empty, and focused for the next try */}
      <input key={state.attempt} id="password" name="password" type="password" autoComplete="current-password" required autoFocus={state.attempt > 0} />
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
