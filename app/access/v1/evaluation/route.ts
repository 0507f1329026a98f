import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /access/v1/evaluation: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/authzen.ts (POST evaluateAccess). */
export const { POST } = nextHandlers('/access/v1/evaluation');
