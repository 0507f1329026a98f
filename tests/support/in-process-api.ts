/**
 * In-process API tests: the real route handlers and wrapper on a real SQLite file in a temp dir, with a copy of
 * config/. The environment must be set before the application is first imported, so a test file calls
 * `useTempServerEnv` at the top and imports lib/app and the routes dynamically after it.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type RouteHandler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

export interface TempServerEnv {
  dir: string;
  adminToken: string;
  /** remove the temp dir (await the app's close() first) */
  remove(): void;
}

export function useTempServerEnv(
  name: string,
  options: { policy?: 'bfsi' | 'empty'; env?: Record<string, string> } = {},
): TempServerEnv {
  const dir = mkdtempSync(join(tmpdir(), `swarm-${name}-`));
  cpSync('config', join(dir, 'config'), { recursive: true });
  const adminToken = `test-admin-token-${name}-0123456789`;
  Object.assign(process.env, {
    SWARM_DB: join(dir, `${name}.db`),
    SWARM_CONFIG_DIR: join(dir, 'config'),
    SWARM_POLICY_FILE: join(dir, 'config', 'permission_policies.yaml'),
    SWARM_PROFILE: options.policy === 'empty' ? '' : 'bfsi',
    SWARM_ADMIN_TOKEN: adminToken,
    SWARM_ADMIN_PASSWORD: 'admin-password-1',
    ...options.env,
  });
  // The application's background work (the WAL checkpointer thread above all) stops when the promise of close()
  // settles: await it first. The removal still tries again on ENOTEMPTY for about five seconds (a temp folder's
  // cleanup, never an assertion).
  return { dir, adminToken, remove: () => rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 25 }) };
}

/** Call a route handler as Next.js would: a Request, and the params as a promise. */
export function callRoute(
  handler: RouteHandler,
  url: string,
  init: RequestInit & { token?: string; params?: Record<string, string> } = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.token) headers.set('authorization', `Bearer ${init.token}`);
  if (init.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  return handler(new Request(`http://localhost${url}`, { ...init, headers }), { params: Promise.resolve(init.params ?? {}) });
}
