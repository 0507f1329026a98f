/**
 * AuthZEN's `http` evaluations give exactly the decision the router gives: for every route of the route table, every
 * method it serves and every role, the evaluation of "may this person call it" is true exactly when the route itself,
 * called by that person (signed in to the console: a session, which no token scope narrows), goes past its refusal.
 * Walks the table, so a new route is compared too. In process: the real route handlers and wrapper on a real SQLite
 * file (under the bfsi profile, whose YAML rules also decide paths).
 */
import { join } from 'node:path';
import { callRoute, useTempServerEnv, type RouteHandler } from './support/in-process-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const server = useTempServerEnv('authzen-parity');
const { getSqliteApp } = await import('@/lib/app');
const { ROUTES, LISTENER_ONLY_ROUTES } = await import('@/lib/http/route-table');
const evaluation = await import('@/app/access/v1/evaluation/route');
const login = await import('@/app/api/v1/auth/login/route');

const PEOPLE = [
  ['victor', 'viewer'],
  ['alex', 'auditor'],
  ['olivia', 'operator'],
  ['ada', 'admin'],
] as const;
/** each person's session cookie */
const sessions: Record<string, string> = {};

beforeAll(async () => {
  const app = getSqliteApp();
  for (const [name, role] of PEOPLE) {
    await app.auth.createUser(name, role, `${name}-password-1`);
    await signIn(name);
  }
});
afterAll(async () => {
  await getSqliteApp().close();
  server.remove();
});

async function signIn(name: string): Promise<void> {
  const r = await callRoute(login.POST as RouteHandler, '/api/v1/auth/login', { method: 'POST', body: JSON.stringify({ username: name, password: `${name}-password-1` }) });
  expect(r.status).toBe(200);
  sessions[name] = r.headers.get('set-cookie')!.split(';')[0]!;
}

/** A dynamic segment's value that no route's parameter schema takes: a request the router lets past is then a 400. */
const NOT_A_VALUE = 'not!valid';

async function evaluate(person: string, method: string, path: string): Promise<boolean> {
  const r = await callRoute(evaluation.POST as RouteHandler, '/access/v1/evaluation', {
    method: 'POST',
    token: server.adminToken,
    body: JSON.stringify({ subject: { type: 'user', id: person }, action: { name: method }, resource: { type: 'http', id: path } }),
  });
  expect(r.status, await r.clone().text()).toBe(200);
  return ((await r.json()) as { decision: boolean }).decision;
}

describe('AuthZEN http evaluations and the router', () => {
  it('agree for every route of the table, every method and every role', async () => {
    const disagreements: string[] = [];
    let compared = 0;
    for (const entry of ROUTES) {
      const adapter = (await import(join(process.cwd(), entry.adapter))) as Record<string, RouteHandler>;
      const params = Object.fromEntries([...entry.path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1]!, NOT_A_VALUE]));
      const path = entry.path.replace(/\{\w+\}/g, NOT_A_VALUE);
      for (const method of Object.keys(entry.methods)) {
        const handler = adapter[method];
        expect(handler, `${entry.adapter} serves ${method}`).toBeDefined();
        for (const [person] of PEOPLE) {
          // A body that no route reads (415 or 400 once past the refusal): nothing the route does is done.
          const body = method === 'GET' ? undefined : 'not json';
          const headers: Record<string, string> = { cookie: sessions[person]!, origin: 'http://localhost', ...(body ? { 'content-type': 'text/plain' } : {}) };
          const r = await callRoute(handler!, path, { method, params, body, headers });
          const routerAllows = r.status !== 401 && r.status !== 403;
          // Signing out (the one route a bad body does not stop) ends the session: sign in again.
          if (entry.path === '/api/v1/auth/logout') await signIn(person);
          const allows = await evaluate(person, method, path);
          compared++;
          if (allows !== routerAllows) disagreements.push(`${method} ${entry.path} as ${person}: router ${r.status} ${await r.text()}, AuthZEN ${allows}`);
        }
      }
    }
    expect(compared).toBeGreaterThan(150);
    expect(disagreements).toEqual([]);
  });

  it('asks what the decision listener asks for the paths it answers itself (GET /metrics: admins only)', async () => {
    expect(LISTENER_ONLY_ROUTES['/metrics']).toEqual({ GET: 'admin' });
    for (const [person, role] of PEOPLE) {
      expect(await evaluate(person, 'GET', '/metrics'), person).toBe(role === 'admin');
      // a spelling that differs only by case never asks for less
      expect(await evaluate(person, 'GET', '/METRICS'), person).toBe(role === 'admin');
    }
  });
});
