import { redirect } from 'next/navigation';
import { requirePage } from '@/lib/http/page-auth';

export const dynamic = 'force-dynamic';

/** Settings: for now only the API tokens (/settings/tokens). Admins only. */
export default async function SettingsPage() {
  await requirePage('/settings', 'admin');
  redirect('/settings/tokens');
}
