import type { Metadata } from 'next';
import { Suspense } from 'react';
import { recordAuditRead } from '@/lib/audit/reads';
import { eventToJson } from '@/lib/audit/security-events';
import { requireSignedIn } from '@/lib/http/page-auth';
import { toSearchParams } from '@/app/(console)/_explorer/url-params';
import { AuditExplorer } from './_components/audit-explorer';
import { integrityFromEvent } from './_components/integrity';
import { firstPageUrl, PAGE_SIZE, parseAuditState, storeFilter } from './_components/url-state';

export const metadata: Metadata = { title: 'Audit' };
export const dynamic = 'force-dynamic';

type Search = Record<string, string | string[] | undefined>;

/**
 * Security events and the integrity of the trail. The server checks the role (a viewer gets the 403 content, and the
 * refusal is recorded), reads the first page of the filter in the URL from the store, and records the read as the
 * API would (audit.queried). From there the explorer reads every other view and page from the API.
 */
export default async function AuditPage({ searchParams }: { searchParams: Promise<Search> }) {
  const { app, principal } = await requireSignedIn('/audit');
  const { state } = parseAuditState(toSearchParams(await searchParams));
  const filter = storeFilter(state);
  const page = await app.securityEvents.list({ ...filter, limit: PAGE_SIZE });
  const events = page.rows.map(eventToJson);

  // A link to one event opens it even when it is not on the first page of its view.
  let opened: ReturnType<typeof eventToJson> | undefined;
  if (state.event !== undefined && !events.some((e) => e.id === state.event)) {
    const row = (await app.securityEvents.list({ cursor: state.event + 1, limit: 1 })).rows[0];
    if (row?.id === state.event) opened = eventToJson(row);
  }

  const last = (await app.securityEvents.list({ type: 'audit.verified', limit: 1 })).rows[0];
  const integrity = last ? integrityFromEvent(eventToJson(last)) : undefined;

  await recordAuditRead(app, {
    principal,
    what: 'security_events',
    filter: { since: filter.since, from: filter.from, to: filter.to, type: filter.type, exclude_type: filter.excludeType, actor: filter.actor, outcome: filter.outcome, decision_id: filter.decisionId },
  });

  return (
    <Suspense fallback={<p className="muted">Loading the audit trail…</p>}>
      <AuditExplorer initial={{ url: firstPageUrl(state), data: { events, next_cursor: page.nextCursor } }} opened={opened} integrity={integrity} />
    </Suspense>
  );
}
