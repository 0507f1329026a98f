import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/notifications/deliveries: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/notifications.ts (GET listDeliveries). */
export const { GET } = nextHandlers('/api/v1/notifications/deliveries');
