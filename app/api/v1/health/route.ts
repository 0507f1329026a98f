import { requireRole, route } from '@/lib/http/route';

export const dynamic = 'force-dynamic';

/** Liveness, public on purpose. */
export const GET = route({ role: requireRole('anonymous') }, () => ({ status: 'ok' }));
