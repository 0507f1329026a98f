/**
 * The pending queue's filter and view, kept in the URL (?agent=&tool=&gate=&risk=&view=compact) so a filtered queue
 * can be reloaded, shared and returned to after signing in again.
 */
import type { Approval } from './approval-types';

export interface QueueFilter {
  agent: string;
  tool: string;
  gate: string;
  risk: string;
  compact: boolean;
}

export const FILTER_KEYS = ['agent', 'tool', 'gate', 'risk'] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];

type Search = Record<string, string | string[] | undefined> | URLSearchParams;

function read(sp: Search, key: string): string {
  const v = sp instanceof URLSearchParams ? sp.get(key) : sp[key];
  return typeof v === 'string' ? v.trim().slice(0, 200) : '';
}

export function queueFilterFrom(sp: Search): QueueFilter {
  return { agent: read(sp, 'agent'), tool: read(sp, 'tool'), gate: read(sp, 'gate'), risk: read(sp, 'risk'), compact: read(sp, 'view') === 'compact' };
}

/** The query string for `filter`, keeping the other parameters of `current` (e.g. ?request=) as they are. */
export function queueFilterQuery(current: URLSearchParams, filter: QueueFilter): string {
  const next = new URLSearchParams(current);
  for (const k of FILTER_KEYS) {
    if (filter[k]) next.set(k, filter[k]);
    else next.delete(k);
  }
  if (filter.compact) next.set('view', 'compact');
  else next.delete('view');
  const q = next.toString();
  return q ? `?${q}` : '';
}

export const isFiltered = (f: QueueFilter): boolean => FILTER_KEYS.some((k) => f[k] !== '');

export function matchesFilter(a: Approval, f: QueueFilter): boolean {
  return FILTER_KEYS.every((k) => f[k] === '' || a[k] === f[k]);
}

/** The choices of one filter: the values the queue holds now, plus the chosen one (so it stays visible at zero). */
export function filterChoices(items: readonly Approval[], key: FilterKey, chosen: string): string[] {
  const values = new Set(items.map((a) => a[key]));
  if (chosen) values.add(chosen);
  const order = key === 'risk' ? ['high', 'medium', 'low'] : null;
  return [...values].sort((x, y) => (order ? order.indexOf(x) - order.indexOf(y) : x.localeCompare(y)));
}
