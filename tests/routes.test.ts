/** No silently open route: every API handler is built by route() with a declared role. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireRole, route } from '@/lib/http/route';
import type { RoleRequirement } from '@/lib/http/route';

function routeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return routeFiles(p);
    return name === 'route.ts' ? [p] : [];
  });
}

const METHOD_EXPORT = /export\s+(?:async\s+)?(?:const|function|let|var)\s+(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\b/g;

describe('API routes', () => {
  // Every route handler of the app: the v1 API, the AuthZEN endpoints (/access/v1) and the metadata.
  const files = [...routeFiles('app/api'), ...routeFiles('app/access')];

  it('exist', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
  });

  it.each(files)('%s declares a role for every method it exports', (file) => {
    const text = readFileSync(file, 'utf8');
    const methods = [...text.matchAll(METHOD_EXPORT)].map((m) => m[1]);
    expect(methods.length).toBeGreaterThan(0);
    for (const method of methods) {
      const declared = new RegExp(`export const ${method} = route\\(\\s*\\{\\s*role: requireRole\\('(anonymous|viewer|auditor|operator|admin)'\\)`);
      expect(text, `${file} ${method}`).toMatch(declared);
    }
  });

  it('cannot be built without a role requirement, even by a cast', () => {
    expect(() => route({} as { role: RoleRequirement }, () => null)).toThrow(/requireRole/);
    expect(() => route({ role: { role: 'admin' } as unknown as RoleRequirement }, () => null)).toThrow(/requireRole/);
    expect(() => route({ role: requireRole('admin') }, () => null)).not.toThrow();
  });

  it('are public only where that is meant: health, readiness, login, the API description and the AuthZEN metadata', () => {
    const open = files.filter((f) => readFileSync(f, 'utf8').includes("requireRole('anonymous')"));
    expect(open.map((f) => f.replace(/\\/g, '/')).sort()).toEqual([
      'app/api/authzen/configuration/route.ts',
      'app/api/v1/auth/login/route.ts',
      'app/api/v1/health/route.ts',
      'app/api/v1/openapi.json/route.ts',
      'app/api/v1/ready/route.ts',
    ]);
  });
});
