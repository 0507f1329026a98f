import type { ReactNode } from 'react';
import { requireSignedIn } from '@/lib/http/page-auth';
import { Nav } from '@/app/_components/nav';
import { SessionBanner, SessionWatch } from '@/app/_components/session-watch';
import { SignOutButton } from '@/app/_components/sign-out-button';

export const dynamic = 'force-dynamic';

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const { principal } = await requireSignedIn('/denials');
  return (
    <SessionWatch principalId={principal.id}>
      <div className="shell">
        <a href="#main" className="skip-link">
          Skip to content
        </a>
        <header className="topbar">
          <div className="brand">
            <span className="brand-mark" aria-hidden="true">◆</span> Swarm Permissions
          </div>
          <div className="topbar-user" data-testid="signed-in-user">
            <span className="user-name">{principal.id}</span>
            <span className={`role-badge role-${principal.role}`}>{principal.role}</span>
            <SignOutButton />
          </div>
        </header>
        <div className="shell-body">
          <Nav role={principal.role} />
          <main id="main" className="content" tabIndex={-1}>
            {/* an ended session is said here, the same way on every console page */}
            <SessionBanner />
            {children}
          </main>
        </div>
      </div>
    </SessionWatch>
  );
}
