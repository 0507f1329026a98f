import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /access/v1/evaluations: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/authzen.ts (POST evaluateAccessMany). */
export const { POST } = nextHandlers('/access/v1/evaluations');
