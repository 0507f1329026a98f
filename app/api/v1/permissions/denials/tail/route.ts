import { requireRole, route } from '@/lib/http/route';
import { denialFilterOf, denialTailQuerySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/**
 * The live tail of the explorer: how many denials of the filter were recorded after `after` (the newest id the page
 * shows), and the newest id. Counts only, no rows: the page polls it every few seconds and reads the rows when the
 * auditor asks for them (that read is recorded like any other). With `newest=1` it answers the newest matching id and
 * the server's time: the view's baseline, which the explorer fixes as its window (until_id and a pinned end).
 */
export const GET = route({ role: requireRole('auditor'), query: denialTailQuerySchema }, async ({ app, query }) => {
  const { after, newest, ...rest } = query;
  if (newest === '1') {
    const top = (await app.denials.query({ ...denialFilterOf(rest), limit: 1 })).rows[0];
    // `now`: the server's clock when the baseline was read, so the page can pin its window's end to it (exact evidence).
    return { after, count: 0, newest_id: top?.id ?? null, now: Date.now() / 1000 };
  }
  const r = await app.denials.newerThan(denialFilterOf(rest), after);
  return { after, count: r.count, newest_id: r.newestId };
});
