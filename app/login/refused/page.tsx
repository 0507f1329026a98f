import type { Metadata } from 'next';
import Link from 'next/link';
import { REFUSAL_TEXT } from '@/lib/sso/service';
import type { RefusalReason } from '@/lib/sso/relying-party';

export const metadata: Metadata = { title: 'Sign-in refused' };
export const dynamic = 'force-dynamic';

/**
 * Where a refused single sign-on lands: why, in fixed words per reason (nothing from the address is shown as text,
 * so a crafted link cannot put words in the console's mouth). The trail has the details (auth.sso.refused).
 */
export default async function SignInRefusedPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const raw = (await searchParams).reason;
  const reason = typeof raw === 'string' && Object.hasOwn(REFUSAL_TEXT, raw) ? (raw as RefusalReason) : null;
  return (
    <main className="login-page">
      <section className="login-card" aria-labelledby="refused-title">
        <div className="brand brand-large">
          <span className="brand-mark" aria-hidden="true">◆</span> Swarm Permissions
        </div>
        <h1 id="refused-title">Sign-in refused</h1>
        <p role="alert" className="form-error">
          {reason ? REFUSAL_TEXT[reason] : 'The sign-in was refused. Start again from the sign-in page.'}
        </p>
        <p>
          <Link href="/login" className="button">
            Back to sign-in
          </Link>
        </p>
      </section>
    </main>
  );
}
