import { describe, expect, it } from 'vitest';
import { allowedMethods, declaredRole, matchRoute } from './route-match';

describe('paths matched with the route table', () => {
  it('matches the routes, a literal segment before a dynamic one, letter case only when asked', () => {
    expect(matchRoute('/api/v1/flags/history')?.entry.path).toBe('/api/v1/flags/history');
    expect(matchRoute('/api/v1/flags/batch_runner')).toMatchObject({ entry: { path: '/api/v1/flags/{name}' }, path: '/api/v1/flags/batch_runner' });
    expect(matchRoute('/api/v1/permissions/denials/summary')?.entry.path).toBe('/api/v1/permissions/denials/summary');
    expect(matchRoute('/API/V1/FLAGS/Batch')).toBeUndefined();
    expect(matchRoute('/API/V1/FLAGS/Batch', { ignoreCase: true })).toMatchObject({ entry: { path: '/api/v1/flags/{name}' }, path: '/api/v1/flags/Batch' });
    expect(matchRoute('/billing/invoices/7', { ignoreCase: true })).toBeUndefined();
  });

  it('names the methods a path allows, for a 405', () => {
    expect(allowedMethods('/api/v1/flags/x')).toEqual(['GET', 'PUT', 'DELETE', 'HEAD', 'OPTIONS']);
    expect(allowedMethods('/api/v1/permissions/check')).toEqual(['POST', 'OPTIONS']);
    expect(allowedMethods('/denials')).toEqual(['GET', 'HEAD', 'POST']);
  });

  it("names the role a route declares for a method, HEAD as GET's, none for a method it does not serve", () => {
    const flag = matchRoute('/api/v1/flags/x')!.entry;
    expect(declaredRole(flag, 'GET')).toBe('viewer');
    expect(declaredRole(flag, 'HEAD')).toBe('viewer');
    expect(declaredRole(flag, 'PUT')).toBe('admin');
    expect(declaredRole(flag, 'POST')).toBeUndefined();
    expect(declaredRole(matchRoute('/api/v1/health')!.entry, 'GET')).toBe('anonymous');
  });
});
