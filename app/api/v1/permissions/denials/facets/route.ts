import { requireRole, route } from '@/lib/http/route';
import { denialFacetQuerySchema, denialFilterOf } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/**
 * The values of one field (`agent`, `tool` or `rule_source`) among the denials of a filter, those starting with
 * `prefix` (any case), most denials first, each with its count: what the explorer suggests as the auditor types.
 * The field's own filter is left out, so the alternatives show; undeclared agents are values like any other.
 */
export const GET = route({ role: requireRole('auditor'), query: denialFacetQuerySchema }, async ({ app, query }) => {
  const { field, prefix, limit, ...rest } = query;
  const f = await app.denials.facet(field, denialFilterOf(rest), { prefix, limit });
  return { field: f.field, prefix: f.prefix, values: f.values.map((v) => ({ value: v.value, count: v.count, ...(v.family ? { family: true } : {}) })), total: f.total };
});
