import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/permissions/denials: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/denials.ts (GET listDenials). */
export const { GET } = nextHandlers('/api/v1/permissions/denials');
