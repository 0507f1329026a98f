import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/flags/{name}: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/flags.ts (GET getFlag; PUT setFlagOverride; DELETE removeFlagOverride). */
export const { GET, PUT, DELETE } = nextHandlers('/api/v1/flags/{name}');
