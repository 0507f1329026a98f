import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/auth/sso/{provider}/start: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/sso.ts (GET startSso). */
export const { GET } = nextHandlers('/api/v1/auth/sso/{provider}/start');
