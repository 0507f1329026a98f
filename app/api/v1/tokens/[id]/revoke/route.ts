import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/tokens/{id}/revoke: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/tokens.ts (POST revokeToken). */
export const { POST } = nextHandlers('/api/v1/tokens/{id}/revoke');
