import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { currentPrincipal } from '@/lib/http/page-auth';
import { returnPath } from '@/lib/http/return-path';
import { LoginForm } from './login-form';

export const metadata: Metadata = { title: 'Sign in' };
export const dynamic = 'force-dynamic';

export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const raw = (await searchParams).next;
  // Without a page to come back to, '/' sends each role to where it works (app/page.tsx).
  const next = returnPath(typeof raw === 'string' ? raw : undefined, '/');
  const { app, principal } = await currentPrincipal();
  if (principal) redirect(next);
  const sso = app.ssoFile.current;
  const passwordsOff = app.sso.localLogin === 'break_glass';
  return (
    <main className="login-page">
      <section className="login-card" aria-labelledby="login-title">
        <div className="brand brand-large">
          <span className="brand-mark" aria-hidden="true">◆</span> Swarm Permissions
        </div>
        <h1 id="login-title">Sign in</h1>
        <p className="muted">The permission and audit console for your AI agents.</p>
        {sso.providers.length > 0 ? (
          <ul className="sso-providers" aria-label="Single sign-on">
            {sso.providers.map((p) => (
              <li key={p.id}>
                {/* a plain link: the browser goes to the provider (keyboard: Tab, Enter) */}
                <a className="button button-primary sso-button" href={`/api/v1/auth/sso/${p.id}/start?next=${encodeURIComponent(next)}`}>
                  Sign in with {p.name}
                </a>
              </li>
            ))}
          </ul>
        ) : null}
        {passwordsOff ? (
          <details className="break-glass">
            <summary>Break-glass administrator</summary>
            <p className="muted">Passwords are off here except for the break-glass administrator; every such sign-in is recorded.</p>
            <LoginForm next={next} />
          </details>
        ) : (
          <>
            {sso.providers.length > 0 ? <p className="login-or muted">or with a user name and password</p> : null}
            <LoginForm next={next} />
          </>
        )}
        <footer className="login-help">
          <p className="muted">
            New here? People sign in to decide gated calls, read denials and the audit trail; agents ask the same server
            with an API token. The <a href="/docs">documentation</a> and the <a href="/api-docs">API reference</a> need no
            sign-in.
          </p>
        </footer>
      </section>
    </main>
  );
}
