import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/tokens: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/tokens.ts (GET listTokens). */
export const { GET } = nextHandlers('/api/v1/tokens');
