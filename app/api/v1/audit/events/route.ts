import { eventToJson } from '@/lib/audit/security-events';
import { recordAuditRead } from '@/lib/audit/reads';
import { requireRole, route } from '@/lib/http/route';
import { eventQuerySchema } from '@/lib/http/schemas';

export const dynamic = 'force-dynamic';

/**
 * Security events, newest first: `since` (seconds back) or `from`/`to`, `type` (exact, or the family before the first
 * dot: `auth` matches `auth.*`), `exclude_type` (the same, left out: the audit page sends `decision`), `actor`, `outcome`, `decision_id`, `limit`, `cursor` (the previous page's next_cursor).
 */
export const GET = route({ role: requireRole('auditor'), query: eventQuerySchema }, async ({ app, query, principal, ip }) => {
  await recordAuditRead(app, { principal, what: 'security_events', filter: { ...query, cursor: undefined, limit: undefined }, ip });
  const page = await app.securityEvents.list({
    since: query.since,
    from: query.from,
    to: query.to,
    type: query.type,
    excludeType: query.exclude_type,
    actor: query.actor,
    outcome: query.outcome,
    decisionId: query.decision_id,
    cursor: query.cursor,
    limit: query.limit,
  });
  return { events: page.rows.map(eventToJson), next_cursor: page.nextCursor };
});
