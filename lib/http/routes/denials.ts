/** The denial trail as the explorer and exports read it: list, one denial, summary, histogram, facets, live tail. */
import { denialExportFileName, denialExportResponse, denialToJson, type ExportMeta } from '@/lib/audit/denials/export';
import { resolveWindow } from '@/lib/audit/denials/filter';
import { recordAuditRead } from '@/lib/audit/reads';
import { AppError } from '@/lib/errors';
import { requireRole, route } from '../route';
import { denialFacetQuerySchema, denialFilterOf, denialMatchSchema, denialQuerySchema, denialTailQuerySchema, idParamSchema } from '../schemas';

/**
 * Query the audit table, newest first. `since` is seconds back from now; `rule_source` matches the exact value or,
 * without a colon, the whole family (`policy` matches every `policy:*`); `q` is free text over the reason, tool, agent,
 * path and arguments; agent, tool and rule_source take a prefix or a case difference (lib/audit/denials/facets.ts); `sort`/`order` page by a keyset cursor. `format=csv` and `format=ndjson` stream every matching row,
 * newest first, whatever the sort. `until_id` leaves out the rows recorded after that id: the explorer sends the newest
 * id of the view it loaded, so an export or a link taken later holds exactly the rows that view showed.
 *
 * An export is one cut: its window (`since` made absolute) and its newest id are fixed before it starts, counted, and
 * named in the x-swarm-export-* headers (and, in JSON lines, in a first `{"export": …}` record).
 */
export const listDenials = route({ role: requireRole('auditor'), query: denialQuerySchema }, async ({ app, query, principal, ip }) => {
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

/** One denial with the trace of its decision. */
export const getDenial = route({ role: requireRole('auditor'), params: idParamSchema }, async ({ app, params }) => {
  const row = await app.denials.get(Number(params.id));
  if (!row) throw new AppError('NOT_FOUND', `There is no denial ${params.id}.`);
  // A hook's entry carries a fifth element: what it did (and, for a rewrite, the hash of the arguments the agent sent).
  const trace = row.traceJson ? (JSON.parse(row.traceJson) as [string, number, string, string, Record<string, unknown>?][]) : null;
  return {
    ...denialToJson(row),
    trace: trace?.map(([decision, priority, rule_source, reason, hook]) => ({ decision, priority, rule_source, reason, ...(hook ? { hook } : {}) })) ?? null,
  };
});

/** The summary of a filter: total denials and the top agents, rule sources and tools (the explorer's cards). */
export const summarizeDenials = route({ role: requireRole('auditor'), query: denialMatchSchema }, async ({ app, query }) => {
  const s = await app.denials.summary(denialFilterOf(query));
  return {
    total: s.total,
    top_agents: s.topAgents,
    top_rule_sources: s.topRuleSources,
    top_tools: s.topTools,
    families: s.families,
  };
});

/** Denials over time for a filter, in buckets of a readable width (UTC days and weeks beyond 8 days), stacked by rule-source family (the explorer's chart). */
export const countDenialsOverTime = route({ role: requireRole('auditor'), query: denialMatchSchema }, async ({ app, query }) => {
  const h = await app.denials.histogram(denialFilterOf(query));
  return { from: h.from, to: h.to, bucket_seconds: h.bucketSeconds, families: h.families, buckets: h.buckets };
});

/**
 * The values of one field (`agent`, `tool` or `rule_source`) among the denials of a filter, those starting with
 * `prefix` (any case), most denials first, each with its count: what the explorer suggests as the auditor types.
 * The field's own filter is left out, so the alternatives show; undeclared agents are values like any other.
 */
export const listDenialFacetValues = route({ role: requireRole('auditor'), query: denialFacetQuerySchema }, async ({ app, query }) => {
  const { field, prefix, limit, ...rest } = query;
  const f = await app.denials.facet(field, denialFilterOf(rest), { prefix, limit });
  return { field: f.field, prefix: f.prefix, values: f.values.map((v) => ({ value: v.value, count: v.count, ...(v.family ? { family: true } : {}) })), total: f.total };
});

/**
 * The live tail of the explorer: how many denials of the filter were recorded after `after` (the newest id the page
 * shows), and the newest id. Counts only, no rows: the page polls it every few seconds and reads the rows when the
 * auditor asks for them (that read is recorded like any other). With `newest=1` it answers the newest matching id and
 * the server's time: the view's baseline, which the explorer fixes as its window (until_id and a pinned end).
 */
export const tailDenials = route({ role: requireRole('auditor'), query: denialTailQuerySchema }, async ({ app, query }) => {
  const { after, newest, ...rest } = query;
  if (newest === '1') {
    const top = (await app.denials.query({ ...denialFilterOf(rest), limit: 1 })).rows[0];
    // `now`: the server's clock when the baseline was read, so the page can pin its window's end to it (exact evidence).
    return { after, count: 0, newest_id: top?.id ?? null, now: Date.now() / 1000 };
  }
  const r = await app.denials.newerThan(denialFilterOf(rest), after);
  return { after, count: r.count, newest_id: r.newestId };
});
