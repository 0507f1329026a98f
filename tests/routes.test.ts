/**
 * No silently open route: every API handler is an entry of the route table (lib/http/route-table.ts), built by
 * route() with a declared role, and each app/ route file only adapts its entry.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROLES } from '@/lib/permissions';
import { requireRole, route } from '@/lib/http/route';
import type { RoleRequirement } from '@/lib/http/route';
import { HTTP_METHODS, ROUTES } from '@/lib/http/route-table';
import { DIRECT_ROUTES } from '@/lib/server/front';

function routeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return routeFiles(p);
    return name === 'route.ts' ? [p.replace(/\\/g, '/')] : [];
  });
}

const METHOD_EXPORT = /export\s+(?:async\s+)?(?:const|function|let|var)\s+(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\b/g;
const ADAPTER = /^export const \{ ((?:GET|POST|PUT|PATCH|DELETE)(?:, (?:GET|POST|PUT|PATCH|DELETE))*) \} = nextHandlers\('([^']+)'\);$/m;

describe('API routes', () => {
  // Every route handler of the app: the v1 API, the AuthZEN endpoints (/access/v1) and the metadata.
  const files = [...routeFiles('app/api'), ...routeFiles('app/access'), ...routeFiles('app/mcp')];

  it('exist', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
    expect(ROUTES.length).toBe(files.length);
  });

  it.each(files)('%s only adapts its entry of the route table: no handler of its own', (file) => {
    const text = readFileSync(file, 'utf8');
    expect(text.match(METHOD_EXPORT), `${file} exports a handler of its own`).toBeNull();
    const adapted = ADAPTER.exec(text);
    expect(adapted, `${file}: export const { GET, ... } = nextHandlers('/path')`).not.toBeNull();
    const entry = ROUTES.find((r) => r.path === adapted![2]);
    expect(entry?.adapter).toBe(file);
    expect(adapted![1]!.split(', ')).toEqual(HTTP_METHODS.filter((m) => entry!.methods[m]));
  });

  it.each(ROUTES.flatMap((r) => HTTP_METHODS.filter((m) => r.methods[m]).map((m) => [m, r.path, r.methods[m]!] as const)))('%s %s declares its role', (_, __, served) => {
    expect(ROLES).toContain(served.route.spec.role.role);
    expect(Object.isFrozen(served.route.spec.role)).toBe(true);
  });

  it('cannot be built without a role requirement, even by a cast', () => {
    expect(() => route({} as { role: RoleRequirement }, () => null)).toThrow(/requireRole/);
    expect(() => route({ role: { role: 'admin' } as unknown as RoleRequirement }, () => null)).toThrow(/requireRole/);
    expect(() => route({ role: requireRole('admin') }, () => null)).not.toThrow();
  });

  it('the decision listener answers the entries the table marks for it, with their cores and body limits', () => {
    expect([...DIRECT_ROUTES.keys()].sort()).toEqual([
      '/access/v1/evaluation',
      '/access/v1/evaluations',
      '/api/v1/permissions/check',
      '/api/v1/permissions/check/batch',
      '/api/v1/permissions/finished',
    ]);
    for (const [path, direct] of DIRECT_ROUTES) {
      const post = ROUTES.find((r) => r.path === path)!.methods.POST!;
      expect(direct.core).toBe(post.route.core);
      expect(direct.maxBodyBytes).toBe(post.route.spec.maxBodyBytes ?? 64 * 1024);
    }
    expect(DIRECT_ROUTES.get('/api/v1/permissions/check/batch')!.maxBodyBytes).toBe(4 * 1024 * 1024);
  });

  it('are public only where that is meant: health, readiness, login and single sign-on, the API description, the AuthZEN and MCP metadata', () => {
    const open = ROUTES.filter((r) => Object.values(r.methods).some((m) => m.route.spec.role.role === 'anonymous'));
    expect(open.map((r) => r.adapter).sort()).toEqual([
      'app/api/authzen/configuration/route.ts',
      'app/api/mcp/resource-metadata/route.ts',
      'app/api/v1/auth/login/route.ts',
      // single sign-on: a person is not signed in yet, a provider has no session (state, nonce, PKCE and signatures protect them)
      'app/api/v1/auth/sso/[provider]/backchannel-logout/route.ts',
      'app/api/v1/auth/sso/[provider]/callback/route.ts',
      'app/api/v1/auth/sso/[provider]/start/route.ts',
      'app/api/v1/health/route.ts',
      'app/api/v1/openapi.json/route.ts',
      'app/api/v1/ready/route.ts',
    ]);
  });
});
