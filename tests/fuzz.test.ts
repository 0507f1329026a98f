/**
 * Bad input, property-based: random and malformed JSON, wrong types, unknown fields, oversized bodies, path traversal
 * in ids, unicode and SQL metacharacters, against every route. Never a 500, always a structured answer, and no row of
 * the audit table lost or altered.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import fc from 'fast-check';
import { useTempServerEnv, type RouteHandler } from './support/in-process-api';
import { afterAll, describe, expect, it } from 'vitest';

const server = useTempServerEnv('fuzz');

const { getSqliteApp } = await import('@/lib/app');
type Handler = RouteHandler;
const routes: { path: string; params: string[]; mod: Record<string, unknown> }[] = [
  { path: '/api/v1/permissions/check', params: [], mod: await import('@/app/api/v1/permissions/check/route') },
  { path: '/api/v1/permissions/denials', params: [], mod: await import('@/app/api/v1/permissions/denials/route') },
  { path: '/api/v1/permissions/denials/{id}', params: ['id'], mod: await import('@/app/api/v1/permissions/denials/[id]/route') },
  { path: '/api/v1/approvals', params: [], mod: await import('@/app/api/v1/approvals/route') },
  { path: '/api/v1/approvals/{id}', params: ['id'], mod: await import('@/app/api/v1/approvals/[id]/route') },
  { path: '/api/v1/approvals/{id}/approve', params: ['id'], mod: await import('@/app/api/v1/approvals/[id]/approve/route') },
  { path: '/api/v1/approvals/{id}/reject', params: ['id'], mod: await import('@/app/api/v1/approvals/[id]/reject/route') },
  { path: '/api/v1/flags', params: [], mod: await import('@/app/api/v1/flags/route') },
  { path: '/api/v1/flags/{name}', params: ['name'], mod: await import('@/app/api/v1/flags/[name]/route') },
  { path: '/api/v1/auth/login', params: [], mod: await import('@/app/api/v1/auth/login/route') },
  { path: '/api/v1/auth/me', params: [], mod: await import('@/app/api/v1/auth/me/route') },
];

afterAll(async () => {
  await getSqliteApp().close();
  server.remove();
});

function auditDigest(): { count: number; digest: string } {
  const rows = getSqliteApp().db.$client.prepare('SELECT * FROM permission_denials ORDER BY id').all();
  return { count: rows.length, digest: createHash('sha256').update(JSON.stringify(rows)).digest('hex') };
}
function digestOfFirst(n: number): string {
  const rows = getSqliteApp().db.$client.prepare('SELECT * FROM permission_denials ORDER BY id LIMIT ?').all(n);
  return createHash('sha256').update(JSON.stringify(rows)).digest('hex');
}

const nasty = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom("' OR 1=1 --", '"; DROP TABLE permission_denials; --', '../../etc/passwd', '..%2F..%2F', '%00', '\u0000', '🦄', 'ﷺ', '\u202e', 'apr_../../x', 'NaN', '-1', '1e309', '9'.repeat(40)),
);
const jsonValue = fc.jsonValue({ maxDepth: 4 });
const body = fc.oneof(
  jsonValue.map((v) => JSON.stringify(v)),
  fc.record({ agent: nasty, tool: nasty, arguments: fc.oneof(jsonValue, fc.dictionary(nasty, jsonValue)) }, { requiredKeys: [] }).map((v) => JSON.stringify(v)),
  fc.record({ value: fc.oneof(fc.boolean(), nasty), reason: nasty, username: nasty, password: nasty }, { requiredKeys: [] }).map((v) => JSON.stringify(v)),
  nasty,
  fc.constantFrom('{', '{"a":', '[1,2', 'null', '""', 'x'.repeat(70_000), `{"agent":"a","tool":"b","arguments":{"x":"${'y'.repeat(70_000)}"}}`),
);
const query = fc.dictionary(fc.constantFrom('since', 'agent', 'tool', 'role', 'rule_source', 'limit', 'cursor', 'format', 'status', 'gate', 'x', '__proto__'), nasty, { maxKeys: 4 });

describe('every route under random and malformed input', () => {
  it('answers a structured 2xx/4xx, never a 500, and leaves existing audit rows untouched', async () => {
    const app = getSqliteApp();
    app.recorder.appendDenial({ toolName: 'seed', ruleSource: 'default', reason: 'seed row' });
    const token = server.adminToken;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'),
        body,
        query,
        nasty,
        fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-8', ''),
        async (route, method, b, q, param, type) => {
          const handler = route.mod[method] as Handler | undefined;
          if (!handler) return;
          const before = auditDigest();
          const url = new URL(`http://localhost${route.path.replace(/\{\w+\}/g, encodeURIComponent(param))}`);
          for (const [k, v] of Object.entries(q)) url.searchParams.set(k, v);
          const headers = new Headers({ authorization: `Bearer ${token}` });
          if (type) headers.set('content-type', type);
          const params = Object.fromEntries(route.params.map((p) => [p, param]));
          const res = await handler(new Request(url, { method, headers, body: method === 'GET' ? undefined : b }), { params: Promise.resolve(params) });
          expect(res.status, `${method} ${url} ${b.slice(0, 80)}`).toBeLessThan(500);
          if (res.status >= 400) {
            const j = (await res.json()) as { error?: { code?: string; message?: string } };
            expect(typeof j.error?.code).toBe('string');
            expect(typeof j.error?.message).toBe('string');
          } else {
            await res.text();
          }
          const after = auditDigest();
          expect(after.count).toBeGreaterThanOrEqual(before.count);
          expect(digestOfFirst(before.count)).toBe(before.digest);
        },
      ),
      { numRuns: 1000 },
    );
  }, 120_000);
});
