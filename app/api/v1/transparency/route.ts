import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/transparency: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/flags.ts (GET getTransparencyReport). */
export const { GET } = nextHandlers('/api/v1/transparency');
