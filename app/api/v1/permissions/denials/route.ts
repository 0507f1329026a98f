import { denialExportFileName, denialExportResponse } from '@/lib/audit/denial-export';
import { denialToJson } from '@/lib/audit/denial-export';
import { recordAuditRead } from '@/lib/audit/reads';
import { requireRole, route } from '@/lib/http/route';
import { denialFilterOf, denialQuerySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/**
 * Query the audit table, newest first. `since` is seconds back from now; `rule_source` matches the exact value or,
 * without a colon, the whole family (`policy` matches every `policy:*`); `q` is free text over the reason, tool, agent,
 * path and arguments; agent, tool and rule_source take a prefix or a case difference (lib/audit/denial-facets.ts); `sort`/`order` page by a keyset cursor. `format=csv` and `format=ndjson` stream every matching row,
 * newest first, whatever the sort.
 */
export const GET = route({ role: requireRole('auditor'), query: denialQuerySchema }, async ({ app, query, principal, ip }) => {
  const filter = denialFilterOf(query);
  const exporting = query.format === 'csv' || query.format === 'ndjson';
  await recordAuditRead(app, { principal, what: 'permission_denials', filter: { ...query, cursor: undefined, limit: undefined, format: undefined }, export: exporting ? query.format : undefined, ip });
  if (query.format === 'csv' || query.format === 'ndjson') {
    return denialExportResponse(
      app.denials.iterate({ ...filter, cursor: query.sort === undefined || query.sort === 'id' ? query.cursor : undefined }),
      query.format,
      denialExportFileName(filter, query.format),
    );
  }
  const page = await app.denials.query({ ...filter, sort: query.sort, order: query.order, cursor: query.cursor, limit: query.limit });
  return { denials: page.rows.map(denialToJson), next_cursor: page.nextCursor };
});
