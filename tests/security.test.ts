/**
 * Every route refuses a missing token, an invalid token and a too-low role — derived from the route table, so a new
 * route is covered the day it is added. Each request goes through the route's own file in app/ (its Next.js adapter).
 */
import { useTempServerEnv, type RouteHandler } from './support/in-process-api';
import { afterAll, describe, expect, it } from 'vitest';
import { ROLES, type Role } from '@/lib/permissions';

const server = useTempServerEnv('sec', { policy: 'empty' });

const { getSqliteApp } = await import('@/lib/app');
const { ROUTES, HTTP_METHODS } = await import('@/lib/http/route-table');
afterAll(async () => {
  await getSqliteApp().close();
  server.remove();
});

type Handler = RouteHandler;

/** Each method of each entry of the route table with its declared role, its adapter, and a URL that reaches it. */
const cases = ROUTES.flatMap((entry) =>
  HTTP_METHODS.filter((m) => entry.methods[m]).map((method) => ({
    file: entry.adapter,
    method,
    role: entry.methods[method]!.route.spec.role.role,
    url: entry.path.replace(/\{id\}/g, 'apr_AAAAAAAAAAAAAAAA').replace(/\{name\}/g, 'batch_runner'),
    params: Object.fromEntries([...entry.path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1]!, m[1] === 'name' ? 'batch_runner' : 'apr_AAAAAAAAAAAAAAAA'])),
  })),
);

const tokenFor = new Map<Role, string>();
async function token(role: Role): Promise<string> {
  let t = tokenFor.get(role);
  if (!t) {
    const app = getSqliteApp();
    const name = `sec_${role}`;
    if (!(await app.auth.findUser(name)) && role !== 'anonymous') await app.auth.createUser(name, role as Exclude<Role, 'anonymous'>, 'security-password');
    t = await app.auth.createToken({ username: name }, 'sec');
    tokenFor.set(role, t);
  }
  return t;
}

async function send(c: (typeof cases)[number], auth?: string, extra: Record<string, string> = {}): Promise<Response> {
  const mod = (await import(/* @vite-ignore */ `../${c.file}`)) as Record<string, Handler>;
  const headers = new Headers({ 'content-type': 'application/json', ...extra });
  if (auth) headers.set('authorization', `Bearer ${auth}`);
  const body = c.method === 'GET' ? undefined : '{}';
  return mod[c.method]!(new Request(`http://localhost${c.url}`, { method: c.method, headers, body }), { params: Promise.resolve(c.params) });
}

describe('every route', () => {
  it('was found', () => {
    expect(cases.length).toBeGreaterThanOrEqual(12);
  });

  const guarded = cases.filter((c) => c.role !== 'anonymous');

  it.each(guarded)('$method $url refuses a request without credentials (401), and records it', async (c) => {
    const before = await getSqliteApp().denials.count();
    const r = await send(c);
    expect(r.status).toBe(401);
    expect(await getSqliteApp().denials.count()).toBe(before + 1);
  });

  it.each(guarded)('$method $url refuses an invalid token (401)', async (c) => {
    expect((await send(c, 'swt_forged-token-value')).status).toBe(401);
  });

  it.each(guarded.filter((c) => c.role !== 'viewer'))('$method $url refuses the role just below $role (403)', async (c) => {
    const below = ROLES[ROLES.indexOf(c.role) - 1]!;
    const r = await send(c, await token(below));
    expect(r.status).toBe(403);
    expect(((await r.json()) as { error: { rule_source: string } }).error.rule_source).toBe(`rbac:${c.role}`);
  });

  it.each(guarded)('$method $url never answers 500 to its own role with an empty request', async (c) => {
    expect((await send(c, await token(c.role))).status).toBeLessThan(500);
  });
});
