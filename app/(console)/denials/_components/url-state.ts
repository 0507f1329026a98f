/**
 * The denial explorer's whole state lives in the URL, so an auditor can send a colleague the exact view and
 * back/forward work. This module parses it (leniently: a hand-edited URL never breaks the page, bad values are dropped
 * and named), writes it back in a stable order, and turns it into the API's query strings. The time part is the
 * explorers' own (../../_explorer/time-window.ts), shared with /audit.
 */
import { z } from 'zod';
import { DENIAL_SORT_KEYS, SORT_ORDERS, type DenialSortKey, type SortOrder } from '@/lib/audit/denials/vocabulary';
import { isCustomRange, isWindowed, parseTimeWindow, readableQuery, timeWindowApiParams, WINDOW_SECONDS, writeTimeWindow, type TimeWindow } from '@/app/(console)/_explorer/time-window';
import { paramReader, setParams, withoutEmpty, type Parsed } from '@/app/(console)/_explorer/url-params';

export const ROLE_OPTIONS = ['anonymous', 'viewer', 'auditor', 'operator', 'admin'] as const;
export const PAGE_SIZES = [25, 50, 100] as const;
const DEFAULT_PAGE_SIZE = 50;

/** The sorts the table offers; `id` (newest first, the record order) is the default and is never written. */
export type TableSort = Exclude<DenialSortKey, 'id'>;

/** The denial explorer's view: the time window (the explorers' own), the filters, the sort, the page, the open row. */
export interface ExplorerState extends TimeWindow {
  agent?: string;
  tool?: string;
  ruleSource?: string;
  role?: (typeof ROLE_OPTIONS)[number];
  q?: string;
  sort?: TableSort;
  order?: SortOrder;
  cursor?: string;
  /** the 1-based page number shown beside the cursor (the cursor alone cannot say) */
  page: number;
  size: number;
  /** the denial open in the detail panel */
  denial?: number;
  /** the newest denial id of the view as it was loaded (a copied exact link has it): newer rows are left out */
  untilId?: number;
}

const text = z.string().trim().min(1).max(200);

const FIELDS = {
  agent: text,
  tool: text,
  rule_source: text,
  role: z.enum(ROLE_OPTIONS),
  q: text,
  sort: z.enum(DENIAL_SORT_KEYS.filter((k): k is TableSort => k !== 'id') as [TableSort, ...TableSort[]]),
  order: z.enum(SORT_ORDERS),
  cursor: z.string().regex(/^(\d{1,18}|[A-Za-z0-9_-]{8,1400})$/),
  page: z.coerce.number().int().min(1).max(1_000_000),
  size: z.coerce.number().refine((n) => (PAGE_SIZES as readonly number[]).includes(n)),
  denial: z.coerce.number().int().min(1),
  until_id: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
} as const;

/** Read the state from a URL's search params. Unknown parameters are ignored silently, invalid ones are reported. */
export function parseState(params: URLSearchParams): Parsed<ExplorerState> {
  const ignored: string[] = [];
  const time = parseTimeWindow(params, ignored);
  const value = paramReader(params, FIELDS, ignored);
  const filters = { agent: value('agent'), tool: value('tool'), ruleSource: value('rule_source'), role: value('role'), q: value('q') };
  // An order only with a sort; a page number only with a cursor (the first page has none).
  const sort = value('sort');
  const order = sort === undefined ? undefined : (value('order') ?? 'asc');
  const cursor = value('cursor');
  const page = cursor === undefined ? 1 : (value('page') ?? 2);
  const state: ExplorerState = { ...time, ...filters, sort, order, cursor, page, size: value('size') ?? DEFAULT_PAGE_SIZE, denial: value('denial'), untilId: value('until_id') };
  return { state: withoutEmpty(state), ignored };
}

/** The attribute filters by their names in a query. */
const filterValues = (s: ExplorerState) => ({ agent: s.agent, tool: s.tool, rule_source: s.ruleSource, role: s.role, q: s.q });
/** The sort as the query says it: an order only with a sort. */
const sortValues = (s: ExplorerState) => ({ sort: s.sort, order: s.sort && (s.order ?? 'asc') });

/** The page's query string for a state: stable order, defaults left out (so /denials is the default view). */
export function serializeState(s: ExplorerState): string {
  const p = new URLSearchParams();
  writeTimeWindow(p, s);
  const size = s.size === DEFAULT_PAGE_SIZE ? undefined : s.size;
  setParams(p, { ...filterValues(s), ...sortValues(s), cursor: s.cursor, page: s.cursor && s.page, size, denial: s.denial, until_id: s.untilId });
  // ':' and '/' are legal in a query string: keep times and rule sources (policy:bfsi/x) readable in a shared link.
  const q = readableQuery(p);
  return q ? `?${q}` : '';
}

/** The filter part of a state as the API's query parameters (no sort, no paging). */
export function filterParams(s: ExplorerState): URLSearchParams {
  return setParams(timeWindowApiParams(s), { ...filterValues(s), until_id: s.untilId });
}

const API = '/api/v1/permissions/denials';

export function listUrl(s: ExplorerState): string {
  return `${API}?${setParams(filterParams(s), { ...sortValues(s), cursor: s.cursor, limit: s.size }).toString()}`;
}

export const summaryUrl = (s: ExplorerState): string => `${API}/summary?${filterParams(s).toString()}`;
export const detailUrl = (id: number): string => `${API}/${id}`;
export const histogramUrl = (s: ExplorerState): string => `${API}/histogram?${filterParams(s).toString()}`;

/**
 * The live tail's question for a filter (`filterKey`: filterParams without until_id): the newest matching id and the
 * server's time (`newest`, the view's baseline), or how many came after `after`.
 */
export function tailUrl(filterKey: string, after: number | 'newest'): string {
  const rest = after === 'newest' ? 'after=0&newest=1' : `after=${after}`;
  return `${API}/tail?${filterKey}${filterKey ? '&' : ''}${rest}`;
}

export function exportUrl(s: ExplorerState, format: 'csv' | 'ndjson'): string {
  return `${API}?${setParams(filterParams(s), { format }).toString()}`;
}

/**
 * The audit report (PDF) of a loaded view's period: its fixed window, `from` included and `to` excluded as the report
 * counts it. The report covers every denial of the period (not the view's other filters); absent while the view has
 * no start (all time has no report period).
 */
export function reportUrl(view: ExplorerState): string | undefined {
  if (view.from === undefined || view.to === undefined || view.to <= view.from) return undefined;
  const iso = (t: number) => new Date(t * 1000).toISOString();
  return `/api/v1/reports/audit.pdf?${new URLSearchParams({ from: iso(view.from), to: iso(view.to) }).toString()}`;
}

/**
 * The state with its window pinned to absolute times, for a link that shows the same rows tomorrow: the last hour
 * becomes from/to (to the second, the end rounded up so that nothing of this moment is left out). Open windows stay
 * open at the start ("all time" up to now gets an end).
 */
export function pinWindow(s: ExplorerState, now = Date.now() / 1000): ExplorerState {
  const next: ExplorerState = { ...s, cursor: undefined, page: 1 };
  if (isCustomRange(s)) {
    if (s.to === undefined) next.to = Math.ceil(now);
    return next;
  }
  next.window = 'all';
  next.to = Math.ceil(now);
  if (s.window !== 'all') next.from = Math.floor(now - WINDOW_SECONDS[s.window]);
  return next;
}

/** What a view was loaded with: the newest denial id then, and the server's time then (absent for a pinned link). */
export interface LoadedWindow {
  untilId: number;
  at?: number;
}

/**
 * The state the view reads with: its window fixed as it was loaded (a relative window made absolute at the load
 * time, the newest id then as until_id). The list, the counts, the chart, the exports and the copied link all take
 * this one, so they hold the same rows whenever they are asked, however many denials arrived since.
 */
export function loadedState(s: ExplorerState, loaded: LoadedWindow): ExplorerState {
  const pinned = loaded.at === undefined ? s : { ...pinWindow(s, loaded.at), cursor: s.cursor, page: s.page, denial: s.denial };
  return { ...pinned, untilId: loaded.untilId };
}

/** The link for exactly the rows of a loaded view: its window and newest id, first page, nothing open. */
export function exactLinkState(view: ExplorerState): ExplorerState {
  return { ...view, cursor: undefined, page: 1, denial: undefined };
}

/** A copy of the state with new filters: back to the first page, the detail panel closed, a new window loaded. */
export function withFilters(s: ExplorerState, change: Partial<ExplorerState>): ExplorerState {
  return withoutEmpty({ ...s, ...change, cursor: undefined, page: 1, denial: undefined, untilId: undefined });
}

export const hasFilters = (s: ExplorerState): boolean => isWindowed(s) || Boolean(s.agent || s.tool || s.ruleSource || s.role || s.q);

/** The state with every filter cleared, keeping the sort, page size and column choices. */
export function clearedFilters(s: ExplorerState): ExplorerState {
  return withFilters({ window: 'all', page: 1, size: s.size, sort: s.sort, order: s.order }, {});
}
