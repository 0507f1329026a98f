import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/auth/sso/{provider}/callback: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/sso.ts (GET ssoCallback). */
export const { GET } = nextHandlers('/api/v1/auth/sso/{provider}/callback');
