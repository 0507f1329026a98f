/**
 * The deliveries filter as it arrives from a URL: the API (`GET /api/v1/notifications/deliveries`) and the
 * `/notifications` page read the same parameters.
 */
import { z } from 'zod';
import { blankToUndefined } from '@/lib/http/blank';
import { NOTIFICATION_EVENTS } from './config';

export const DELIVERY_STATUSES = ['pending', 'sending', 'delivered', 'failed'] as const;

export const deliveriesQuerySchema = z.strictObject({
  status: z.preprocess(blankToUndefined, z.enum(DELIVERY_STATUSES, { error: `status is one of ${DELIVERY_STATUSES.join(', ')}` }).optional()),
  channel: z.preprocess(blankToUndefined, z.string().regex(/^[a-z][a-z0-9_-]*$/, 'channel is a channel id').optional()),
  event: z.preprocess(blankToUndefined, z.enum(NOTIFICATION_EVENTS, { error: `event is one of ${NOTIFICATION_EVENTS.join(', ')}` }).optional()),
  /** the next_cursor of the previous page */
  before: z.preprocess(blankToUndefined, z.string().regex(/^\d{1,18}$/, 'before is the next_cursor of the previous page').transform(Number).optional()),
  limit: z.preprocess(blankToUndefined, z.coerce.number().int().min(1).max(500).default(100)),
});
