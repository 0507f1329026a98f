import { flagHistoryQuerySchema } from '@/lib/flags/query';
import { transparencyReport } from '@/lib/flags/transparency';
import { requireRole, route } from '@/lib/http/route';

export const dynamic = 'force-dynamic';

/**
 * What /transparency shows, as JSON: the flags by tier (value, layer, description, guards, last change), the
 * configuration problems, the rule sources in force and the flag history (filtered by ?name= and ?by=, paged by
 * ?before=<next_cursor>, ?limit=).
 */
export const GET = route({ role: requireRole('viewer'), query: flagHistoryQuerySchema }, ({ app, query }) => transparencyReport(app, query));
