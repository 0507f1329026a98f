import { describe, expect, it } from 'vitest';
import { firstPageUrl, olderUrl, parseAuditState, serializeAuditState, withFilters } from './url-state';

const parse = (qs: string) => parseAuditState(new URLSearchParams(qs));

describe('the audit URL', () => {
  it('is empty for the default view, and round-trips every filter and the open event', () => {
    expect(serializeAuditState(parse('').state)).toBe('');
    const qs = '?from=2025-11-20T10:00:00Z&to=2025-11-21T10:00:00Z&type=auth&actor=alex&outcome=failed&decision_id=0f8fad5b-d9cb-469f-a165-70867728950e&event=42';
    const { state, ignored } = parse(qs);
    expect(ignored).toEqual([]);
    expect(state).toMatchObject({ type: 'auth', actor: 'alex', outcome: 'failed', event: 42 });
    expect(serializeAuditState(state)).toBe(qs);
  });

  it('leaves out and names what it does not understand, the time part as the denial explorer does', () => {
    const { state, ignored } = parse('window=fortnight&type=Auth!&outcome=maybe&event=x&actor=alex');
    expect(ignored).toEqual(['window', 'type', 'outcome', 'event']);
    expect(state).toEqual({ window: 'all', actor: 'alex' });
  });

  it('reads the first page the server rendered, and the older ones, with one filter (logged decisions left out by default)', () => {
    const { state } = parse('window=24h&actor=alex');
    expect(firstPageUrl(state)).toBe('/api/v1/audit/events?since=86400&exclude_type=decision&actor=alex&limit=50');
    expect(olderUrl(state, 99)).toBe('/api/v1/audit/events?since=86400&exclude_type=decision&actor=alex&cursor=99&limit=50');
    expect(firstPageUrl(parse('type=decision').state)).toBe('/api/v1/audit/events?type=decision&limit=50');
  });

  it('closes the open event when a filter changes, and drops emptied filters', () => {
    const { state } = parse('type=auth&event=7');
    expect(serializeAuditState(withFilters(state, { outcome: 'succeeded' }))).toBe('?type=auth&outcome=succeeded');
    expect(serializeAuditState(withFilters(state, { type: undefined }))).toBe('');
  });
});
