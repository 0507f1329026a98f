'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { canOpen } from './page-roles';
import { helpFor } from './help-links';

const LINKS = [
  { href: '/denials', label: 'Denials', hint: 'What was blocked, and why' },
  { href: '/audit', label: 'Audit', hint: 'Security events and integrity' },
  { href: '/reports', label: 'Reports', hint: 'The audit report of a period' },
  { href: '/approvals', label: 'Approvals', hint: 'Gated calls waiting for a person' },
  { href: '/transparency', label: 'Transparency', hint: 'Flags and rules in force' },
  { href: '/policy', label: 'Policy', hint: 'Proposed changes to the rules' },
  { href: '/notifications', label: 'Notifications', hint: 'Who was told, and what failed' },
  { href: '/settings/tokens', label: 'Tokens', hint: 'API tokens: scopes, expiry, last use' },
];

/** The console's navigation: only the pages the signed-in role can open. */
export function Nav({ role }: { role: string }) {
  const path = usePathname();
  return (
    <nav className="sidenav" aria-label="Console">
      <ul>
        {LINKS.filter((l) => canOpen(role, l.href)).map((l) => {
          const current = path === l.href || path.startsWith(`${l.href}/`);
          return (
            <li key={l.href}>
              <Link href={l.href} aria-current={current ? 'page' : undefined} className={current ? 'active' : undefined}>
                <span className="nav-label">{l.label}</span>
                <span className="nav-hint">{l.hint}</span>
              </Link>
            </li>
          );
        })}
        <li className="nav-help">
          {/* the documentation of the page it is on */}
          <Link href={helpFor(path)}>
            <span className="nav-label">Documentation</span>
            <span className="nav-hint">How this page works</span>
          </Link>
        </li>
        <li>
          <Link href="/api-docs">
            <span className="nav-label">API reference</span>
            <span className="nav-hint">Every route, its role and schemas</span>
          </Link>
        </li>
      </ul>
    </nav>
  );
}
