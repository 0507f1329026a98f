import { describe, expect, it } from 'vitest';
import { clearedFilters, exportUrl, filterParams, histogramUrl, listUrl, parseState, reportUrl, serializeState, summaryUrl, withFilters } from './url-state';

const parse = (qs: string) => parseState(new URLSearchParams(qs));

describe('the explorer URL', () => {
  it('is empty for the default view, so /denials stays /denials', () => {
    const { state, ignored } = parse('');
    expect(ignored).toEqual([]);
    expect(serializeState(state)).toBe('');
    expect(filterParams(state).toString()).toBe('');
  });

  it('round-trips every filter, the sort, the page and the open denial', () => {
    const qs = '?from=2025-11-20T10:00:00Z&to=2025-11-21T10:00:00Z&agent=data_cleaner&tool=deploy_serving&rule_source=policy&role=viewer&q=m-42+prod&sort=agent_name&order=desc&cursor=WyJhZ2VudF9uYW1lIiwiZGVzYyIsIngiLDNd&page=3&size=100&denial=42';
    const { state, ignored } = parse(qs);
    expect(ignored).toEqual([]);
    expect(state).toMatchObject({ agent: 'data_cleaner', tool: 'deploy_serving', ruleSource: 'policy', role: 'viewer', q: 'm-42 prod', sort: 'agent_name', order: 'desc', page: 3, size: 100, denial: 42 });
    expect(state.from).toBe(Date.parse('2025-11-20T10:00:00Z') / 1000);
    expect(serializeState(state)).toBe(qs);
  });

  it('leaves out what it does not understand and says which parameters those were', () => {
    const { state, ignored } = parse('window=fortnight&role=root&size=7&from=yesterday&agent=ok&sort=reason&denial=x');
    expect(ignored.sort()).toEqual(['denial', 'from', 'role', 'size', 'sort', 'window']);
    expect(state).toMatchObject({ window: 'all', agent: 'ok', size: 50 });
    expect(state.sort).toBeUndefined();
  });

  it('puts a reversed custom range the right way round', () => {
    const { state } = parse('from=2000&to=1000');
    expect([state.from, state.to]).toEqual([1000, 2000]);
  });

  it('gives the API the same filter for the list, the summary, the chart and the exports', () => {
    const { state } = parse('window=7d&agent=trainer&rule_source=policy&q=500&sort=tool_name&order=asc&size=25');
    const filter = 'since=604800&agent=trainer&rule_source=policy&q=500';
    expect(listUrl(state)).toBe(`/api/v1/permissions/denials?${filter}&sort=tool_name&order=asc&limit=25`);
    expect(summaryUrl(state)).toBe(`/api/v1/permissions/denials/summary?${filter}`);
    expect(histogramUrl(state)).toBe(`/api/v1/permissions/denials/histogram?${filter}`);
    expect(exportUrl(state, 'csv')).toBe(`/api/v1/permissions/denials?${filter}&format=csv`);
    expect(exportUrl(state, 'ndjson')).toBe(`/api/v1/permissions/denials?${filter}&format=ndjson`);
  });

  it('goes back to the first page and closes the detail when a filter changes, and clears filters but not the sort', () => {
    const { state } = parse('agent=a&cursor=123&page=4&denial=9&sort=tool_name&order=asc');
    const next = withFilters(state, { tool: 'x' });
    expect(serializeState(next)).toBe('?agent=a&tool=x&sort=tool_name&order=asc');
    expect(serializeState(clearedFilters(next))).toBe('?sort=tool_name&order=asc');
    expect(serializeState(withFilters(state, { agent: undefined }))).toBe('?sort=tool_name&order=asc');
  });

  it('prefers a custom range over a relative window', () => {
    const { state } = parse('window=24h&from=1700000000');
    expect(filterParams(state).toString()).toBe('from=1700000000');
    expect(serializeState(state)).toBe('?from=2023-11-14T22:13:20Z');
  });
});

describe("the report of a view's period", () => {
  it('is the PDF of exactly the fixed window, none for a window without a start', () => {
    const from = Date.parse('2026-11-25T18:00:00Z') / 1000;
    const to = Date.parse('2026-11-25T19:00:01Z') / 1000;
    expect(reportUrl({ ...parse('').state, from, to, untilId: 9 })).toBe('/api/v1/reports/audit.pdf?from=2026-11-25T18%3A00%3A00.000Z&to=2026-11-25T19%3A00%3A01.000Z');
    expect(reportUrl({ ...parse('').state, to })).toBeUndefined();
  });
});
