import type { ReactNode } from 'react';
import { requirePage } from '@/lib/http/page-auth';

export const dynamic = 'force-dynamic';

/**
 * The role /transparency needs, checked before anything of it is sent: a refusal is recorded and answered 403, and only an
 * allowed request streams the page's loading line (loading.tsx) and then the page.
 */
export default async function TransparencyLayout({ children }: { children: ReactNode }) {
  await requirePage('/transparency', 'viewer');
  return children;
}
