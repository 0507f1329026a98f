import type { ReactNode } from 'react';
import { requirePage } from '@/lib/http/page-auth';
import type { Role } from '@/lib/permissions';

/**
 * The layout of a console section: the role `path` needs, checked before anything of the section is sent. A refusal
 * is recorded and answered 403; only an allowed request streams the section's loading line (its loading.tsx:
 * PageLoading) and then the page, which does not decide again.
 */
export function sectionLayout(path: string, role: Role) {
  return async function SectionLayout({ children }: { children: ReactNode }) {
    await requirePage(path, role);
    return children;
  };
}
