import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/auth/login: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/sessions.ts (POST signIn). */
export const { POST } = nextHandlers('/api/v1/auth/login');
