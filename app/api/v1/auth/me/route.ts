import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/auth/me: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/sessions.ts (GET whoAmI). */
export const { GET } = nextHandlers('/api/v1/auth/me');
