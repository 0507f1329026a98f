import { denialExportFileName, denialExportResponse, type ExportMeta } from '@/lib/audit/denial-export';
import { denialToJson } from '@/lib/audit/denial-export';
import { resolveWindow } from '@/lib/audit/denial-filter';
import { recordAuditRead } from '@/lib/audit/reads';
import { requireRole, route } from '@/lib/http/route';
import { denialFilterOf, denialQuerySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/**
 * Query the audit table, newest first. `since` is seconds back from now; `rule_source` matches the exact value or,
 * without a colon, the whole family (`policy` matches every `policy:*`); `q` is free text over the reason, tool, agent,
 * path and arguments; agent, tool and rule_source take a prefix or a case difference (lib/audit/denial-facets.ts); `sort`/`order` page by a keyset cursor. `format=csv` and `format=ndjson` stream every matching row,
 * newest first, whatever the sort. `until_id` leaves out the rows recorded after that id: the explorer sends the newest
 * id of the view it loaded, so an export or a link taken later holds exactly the rows that view showed.
 *
 * An export is one cut: its window (`since` made absolute) and its newest id are fixed before it starts, counted, and
 * named in the x-swarm-export-* headers (and, in JSON lines, in a first `{"export": …}` record).
 */
export const GET = route({ role: requireRole('auditor'), query: denialQuerySchema }, async ({ app, query, principal, ip }) => {
  const filter = denialFilterOf(query);
  const exporting = query.format === 'csv' || query.format === 'ndjson';
  await recordAuditRead(app, { principal, what: 'permission_denials', filter: { ...query, cursor: undefined, limit: undefined, format: undefined }, export: exporting ? query.format : undefined, ip });
  if (query.format === 'csv' || query.format === 'ndjson') {
    const exportedAt = Date.now() / 1000;
    const newest = await app.denials.newestId();
    const cut = { ...resolveWindow(filter, exportedAt), untilId: Math.min(filter.untilId ?? newest, newest) };
    const cursor = query.sort === undefined || query.sort === 'id' ? query.cursor : undefined;
    const attributes: Record<string, string> = {};
    for (const k of ['agent', 'tool', 'rule_source', 'role', 'q'] as const) if (query[k] !== undefined) attributes[k] = String(query[k]);
    const meta: ExportMeta = {
      kind: 'permission_denials',
      from: cut.from ?? null,
      to: cut.to ?? null,
      until_id: cut.untilId,
      rows: cursor === undefined ? await app.denials.count(cut) : null,
      filter: attributes,
      exported_at: exportedAt,
    };
    return denialExportResponse(app.denials.iterate({ ...cut, cursor }), query.format, denialExportFileName(filter, query.format), meta);
  }
  const page = await app.denials.query({ ...filter, sort: query.sort, order: query.order, cursor: query.cursor, limit: query.limit });
  return { denials: page.rows.map(denialToJson), next_cursor: page.nextCursor };
});
