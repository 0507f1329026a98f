import { flagHistoryQuerySchema } from '@/lib/flags/query';
import { historyToJson, readHistory } from '@/lib/flags/transparency';
import { requireRole, route } from '@/lib/http/route';

export const dynamic = 'force-dynamic';

/**
 * Every flag change, newest first: who, when, old and new value, reason, layer. Filter by flag (?name=) and by who
 * (?by=, exactly as recorded); page with ?before=<next_cursor> and ?limit= (100 by default, at most 1000).
 */
export const GET = route({ role: requireRole('viewer'), query: flagHistoryQuerySchema }, async ({ app, query }) => historyToJson(query, await readHistory(app, query)));
