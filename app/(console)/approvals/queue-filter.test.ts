import { describe, expect, it } from 'vitest';
import type { Approval } from './approval-types';
import { filterChoices, isFiltered, matchesFilter, queueFilterFrom, queueFilterQuery } from './queue-filter';

const a = (agent: string, tool: string, gate: string, risk: Approval['risk']) => ({ agent, tool, gate, risk }) as Approval;

describe('the pending queue filter', () => {
  it('is read from the URL and written back, keeping the other parameters', () => {
    const f = queueFilterFrom(new URLSearchParams('agent=deployer&risk=high&view=compact&request=apr_x'));
    expect(f).toEqual({ agent: 'deployer', tool: '', gate: '', risk: 'high', compact: true });
    expect(isFiltered(f)).toBe(true);
    expect(queueFilterQuery(new URLSearchParams('request=apr_x&agent=deployer'), { ...f, agent: '', compact: false })).toBe('?request=apr_x&risk=high');
    expect(queueFilterQuery(new URLSearchParams(), { agent: '', tool: '', gate: '', risk: '', compact: false })).toBe('');
  });
  it('keeps a request only when every chosen field matches', () => {
    const f = { agent: 'deployer', tool: '', gate: '', risk: 'high', compact: false };
    expect(matchesFilter(a('deployer', 'deploy_serving', 'deploy', 'high'), f)).toBe(true);
    expect(matchesFilter(a('deployer', 'send_email', 'external-mail', 'medium'), f)).toBe(false);
    expect(matchesFilter(a('trainer', 'deploy_serving', 'deploy', 'high'), f)).toBe(false);
  });
  it('offers the values present, and keeps the chosen one at zero', () => {
    const items = [a('x', 't', 'g', 'low'), a('y', 't', 'g', 'high')];
    expect(filterChoices(items, 'risk', '')).toEqual(['high', 'low']);
    expect(filterChoices(items, 'agent', 'z')).toEqual(['x', 'y', 'z']);
  });
});
