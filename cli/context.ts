/** What every command gets: where to write, the environment, and the application when it needs the database. */
import { userInfo } from 'node:os';
import { createApp, type SwarmApp } from '../lib/app';
import type { UserRow } from '../db/schema';
import type { Role } from '../lib/permissions';
import { CliError } from './errors';

export type Env = Readonly<Record<string, string | undefined>>;

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export interface CliContext {
  io: Io;
  env: Env;
}

export const DEFAULT_DB = 'data/swarm.db';

export function dbPath(env: Env): string {
  const p = env.SWARM_DB;
  return p && p.length > 0 ? p : DEFAULT_DB;
}

/** Open the application (no config polling: one-shot commands), run `fn`, and always close it. */
export function withApp<T>(ctx: CliContext, fn: (app: SwarmApp) => T): T {
  const app = createApp({ dbPath: dbPath(ctx.env), env: ctx.env, watchConfig: false });
  try {
    return fn(app);
  } finally {
    app.close();
  }
}

/** Who a change is attributed to when no --as is given: the operating-system user running the CLI. */
export function cliActor(env: Env): string {
  let name: string | undefined;
  try {
    name = userInfo().username;
  } catch {
    // no passwd entry (some containers): fall back to the environment
    name = env.USER ?? env.USERNAME;
  }
  return `cli:${name && name.length > 0 ? name : 'unknown'}`;
}

/**
 * The user named by --as, who must exist, be enabled and hold one of `roles`: the CLI writes to the database
 * directly, so --as is what keeps the audit trail honest about who decided.
 */
export function actingUser(app: SwarmApp, username: string, roles: readonly Role[], what: string): UserRow {
  const user = app.auth.findUser(username);
  if (!user) throw new CliError(`there is no user "${username}" (--as must name an existing user).`);
  if (user.disabled) throw new CliError(`user "${username}" is disabled and cannot ${what}.`);
  if (!roles.includes(user.role)) {
    const allowed = roles.map((r) => `${article(r)} ${r}`).join(' or ');
    throw new CliError(`user "${username}" is ${article(user.role)} ${user.role}; only ${allowed} can ${what}.`);
  }
  return user;
}

const article = (word: string) => (/^[aeiou]/.test(word) ? 'an' : 'a');
