import { redirect } from 'next/navigation';
import { landingFor } from '@/app/_components/page-roles';
import { currentPrincipal } from '@/lib/http/page-auth';

export const dynamic = 'force-dynamic';

/** The console's front door: each role lands where it works (auditors and admins on /denials, operators on
 * /approvals, viewers on /transparency); without a session, the login. */
export default async function Home() {
  const { principal } = await currentPrincipal();
  redirect(principal ? landingFor(principal.role) : '/login');
}
