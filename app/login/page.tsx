import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { currentPrincipal, safeNextPath } from '@/lib/http/page-auth';
import { LoginForm } from './login-form';

export const metadata: Metadata = { title: 'Sign in' };
export const dynamic = 'force-dynamic';

export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const raw = (await searchParams).next;
  // Without a page to come back to, '/' sends each role to where it works (app/page.tsx).
  const next = typeof raw === 'string' && raw !== '' ? safeNextPath(raw) : '/';
  const { principal } = await currentPrincipal();
  if (principal) redirect(next);
  return (
    <main className="login-page">
      <section className="login-card" aria-labelledby="login-title">
        <div className="brand brand-large">
          <span className="brand-mark" aria-hidden="true">◆</span> Swarm Permissions
        </div>
        <h1 id="login-title">Sign in</h1>
        <p className="muted">The permission and audit console for your AI agents.</p>
        <LoginForm next={next} />
      </section>
    </main>
  );
}
