/** Notifications queued for the channels of config/notifications.yaml. */
import { deliveriesQuerySchema } from '@/lib/notifications/query';
import { deliveryToJson } from '@/lib/notifications/service';
import { requireRole, route } from '../route';

/**
 * Every notification queued for a channel (config/notifications.yaml), newest first, with its state (pending, sending,
 * delivered, failed), attempts and the last error. Admins only. Filter by status, channel and event; page with
 * ?before=<next_cursor>.
 */
export const listDeliveries = route({ role: requireRole('admin'), query: deliveriesQuerySchema }, async ({ app, query }) => {
  const rows = await app.notifications.list(query);
  return {
    deliveries: rows.map(deliveryToJson),
    counts: await app.notifications.counts(),
    channels: app.notificationsFile.current.channels.map((c) => ({ id: c.id, kind: c.kind, events: c.events })),
    config: app.notificationsFile.status(),
    next_cursor: rows.length === query.limit ? String(rows[rows.length - 1]!.id) : null,
  };
});
