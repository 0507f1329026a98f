import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /.well-known/authzen-configuration: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/authzen.ts (GET getAuthzenConfiguration). */
export const { GET } = nextHandlers('/.well-known/authzen-configuration');
