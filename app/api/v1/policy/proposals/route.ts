import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/policy/proposals: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/policy.ts (GET and POST listProposals, createProposal). */
export const { GET, POST } = nextHandlers('/api/v1/policy/proposals');
