/**
 * The audit page's state lives in the URL, like the denial explorer's: shareable, and back/forward work. The time
 * part (window, or from/to) is the explorers' own (../../_explorer/time-window.ts), so both pages speak the same
 * links; the rest are the security-event filters of GET /api/v1/audit/events, plus the event open in the panel.
 */
import { z } from 'zod';
import { isCustomRange, isWindowed, parseTimeWindow, readableQuery, timeWindowApiParams, WINDOW_SECONDS, writeTimeWindow, type TimeWindow } from '@/app/(console)/_explorer/time-window';
import { paramReader, setParams, withoutEmpty, type Parsed } from '@/app/(console)/_explorer/url-params';

export const OUTCOMES = ['succeeded', 'failed', 'refused'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const PAGE_SIZE = 50;

export interface AuditState extends TimeWindow {
  /** an exact type (auth.login.failed) or a family (auth) */
  type?: string;
  actor?: string;
  outcome?: Outcome;
  /** decision_id */
  decision?: string;
  /** the event open in the detail panel */
  event?: number;
}

/** The same checks as the API's query schema (lib/http/schemas.ts), so a link the page accepts is one the API accepts. */
const FIELDS = {
  type: z.string().trim().regex(/^[a-z_]+(\.[a-z_]+)*$/),
  actor: z.string().trim().min(1).max(200),
  outcome: z.enum(OUTCOMES),
  decision_id: z.string().trim().regex(/^[0-9a-f-]{36}$/),
  event: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
} as const;

export function parseAuditState(params: URLSearchParams): Parsed<AuditState> {
  const ignored: string[] = [];
  const time = parseTimeWindow(params, ignored);
  const value = paramReader(params, FIELDS, ignored);
  const state: AuditState = { ...time, type: value('type'), actor: value('actor'), outcome: value('outcome'), decision: value('decision_id'), event: value('event') };
  return { state: withoutEmpty(state), ignored };
}

/** The page's query string: stable order, defaults left out (so /audit is the default view). */
export function serializeAuditState(s: AuditState): string {
  const time = new URLSearchParams();
  writeTimeWindow(time, s);
  const rest = setParams(new URLSearchParams(), { type: s.type, actor: s.actor, outcome: s.outcome, decision_id: s.decision, event: s.event });
  const q = [readableQuery(time), rest.toString()].filter(Boolean).join('&');
  return q ? `?${q}` : '';
}

/** The page of the view after `cursor` ("Older events"), the filters as the API's query parameters. */
export function olderUrl(s: AuditState, cursor?: number): string {
  const filter = { type: s.type, exclude_type: excludedType(s), actor: s.actor, outcome: s.outcome, decision_id: s.decision };
  return `/api/v1/audit/events?${setParams(timeWindowApiParams(s), { ...filter, cursor, limit: PAGE_SIZE }).toString()}`;
}

/** The first page of a view (the server renders it with the page; the browser reads it for every later view). */
export const firstPageUrl = (s: AuditState): string => olderUrl(s);

/**
 * The type the view leaves out: the decisions logged under decision_log_all (`decision.allowed`, `decision.asked`) are
 * their own view (Event type: Logged decisions). Left out unless a type is chosen or one decision is followed.
 */
export const DECISIONS = 'decision';
export function excludedType(s: AuditState): string | undefined {
  return s.type === undefined && s.decision === undefined ? DECISIONS : undefined;
}

/** The filters as the store's (server side: the page's first page). */
export function storeFilter(s: AuditState) {
  const custom = isCustomRange(s);
  return {
    since: !custom && s.window !== 'all' ? WINDOW_SECONDS[s.window] : undefined,
    from: s.from !== undefined ? Math.floor(s.from) : undefined,
    to: s.to !== undefined ? Math.ceil(s.to) : undefined,
    type: s.type,
    excludeType: excludedType(s),
    actor: s.actor,
    outcome: s.outcome,
    decisionId: s.decision,
  };
}

/** A view with new filters: the detail panel closed. Empty values are dropped. */
export function withFilters(s: AuditState, change: Partial<AuditState>): AuditState {
  return withoutEmpty({ ...s, ...change, event: undefined });
}

export const hasFilters = (s: AuditState): boolean => isWindowed(s) || Boolean(s.type || s.actor || s.outcome || s.decision);

/** The view without the open event: what the loaded rows belong to. */
export const viewKey = (s: AuditState): string => serializeAuditState({ ...s, event: undefined });
