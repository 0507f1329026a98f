import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/policy/activations: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/policy.ts (GET listActivations). */
export const { GET } = nextHandlers('/api/v1/policy/activations');
