/**
 * Every route refuses a missing token, an invalid token and a too-low role — derived from the routes themselves,
 * so a new route is covered the day it is added.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { useTempServerEnv, type RouteHandler } from './support/in-process-api';
import { afterAll, describe, expect, it } from 'vitest';
import { ROLES, type Role } from '@/lib/permissions';

const server = useTempServerEnv('sec', { policy: 'empty' });

const { getSqliteApp } = await import('@/lib/app');
afterAll(() => {
  getSqliteApp().close();
  server.remove();
});

type Handler = RouteHandler;

function routeFiles(d: string): string[] {
  return readdirSync(d).flatMap((n) => {
    const p = join(d, n);
    return statSync(p).isDirectory() ? routeFiles(p) : n === 'route.ts' ? [p] : [];
  });
}

/** Each exported method of each route file with its declared role, and a URL that reaches it. */
const cases = routeFiles('app/api').flatMap((file) => {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/export const (GET|POST|PUT|DELETE|PATCH) = route\(\s*\{\s*role: requireRole\('(\w+)'\)/g)].map((m) => ({
    file,
    method: m[1]!,
    role: m[2] as Role,
    url: file
      .replace(/^app/, '')
      .replace(/\/route\.ts$/, '')
      .replace(/\[id\]/g, 'apr_AAAAAAAAAAAAAAAA')
      .replace(/\[name\]/g, 'batch_runner'),
  }));
});

const tokenFor = new Map<Role, string>();
function token(role: Role): string {
  let t = tokenFor.get(role);
  if (!t) {
    const app = getSqliteApp();
    const name = `sec_${role}`;
    if (!app.auth.findUser(name) && role !== 'anonymous') app.auth.createUser(name, role as Exclude<Role, 'anonymous'>, 'security-password');
    t = app.auth.createToken({ username: name }, 'sec');
    tokenFor.set(role, t);
  }
  return t;
}

async function send(c: (typeof cases)[number], auth?: string, extra: Record<string, string> = {}): Promise<Response> {
  const mod = (await import(`../${c.file}`)) as Record<string, Handler>;
  const headers = new Headers({ 'content-type': 'application/json', ...extra });
  if (auth) headers.set('authorization', `Bearer ${auth}`);
  const id = c.url.match(/apr_\w+/)?.[0];
  const params: Record<string, string> = {};
  if (c.file.includes('[id]')) params.id = id ?? '1';
  if (c.file.includes('[name]')) params.name = 'batch_runner';
  const body = c.method === 'GET' ? undefined : '{}';
  return mod[c.method]!(new Request(`http://localhost${c.url}`, { method: c.method, headers, body }), { params: Promise.resolve(params) });
}

describe('every route', () => {
  it('was found', () => {
    expect(cases.length).toBeGreaterThanOrEqual(12);
  });

  const guarded = cases.filter((c) => c.role !== 'anonymous');

  it.each(guarded)('$method $url refuses a request without credentials (401), and records it', async (c) => {
    const before = getSqliteApp().denials.count();
    const r = await send(c);
    expect(r.status).toBe(401);
    expect(getSqliteApp().denials.count()).toBe(before + 1);
  });

  it.each(guarded)('$method $url refuses an invalid token (401)', async (c) => {
    expect((await send(c, 'swt_forged-token-value')).status).toBe(401);
  });

  it.each(guarded.filter((c) => c.role !== 'viewer'))('$method $url refuses the role just below $role (403)', async (c) => {
    const below = ROLES[ROLES.indexOf(c.role) - 1]!;
    const r = await send(c, token(below));
    expect(r.status).toBe(403);
    expect(((await r.json()) as { error: { rule_source: string } }).error.rule_source).toBe(`rbac:${c.role}`);
  });

  it.each(guarded)('$method $url never answers 500 to its own role with an empty request', async (c) => {
    expect((await send(c, token(c.role))).status).toBeLessThan(500);
  });
});
