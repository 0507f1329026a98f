import { requireRole, route } from '@/lib/http/route';
import { denialFilterOf, denialMatchSchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/** Denials over time for a filter, in buckets of a readable width (UTC days and weeks beyond 8 days), stacked by rule-source family (the explorer's chart). */
export const GET = route({ role: requireRole('auditor'), query: denialMatchSchema }, async ({ app, query }) => {
  const h = await app.denials.histogram(denialFilterOf(query));
  return { from: h.from, to: h.to, bucket_seconds: h.bucketSeconds, families: h.families, buckets: h.buckets };
});
