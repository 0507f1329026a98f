/** What every command gets: where to write, the environment, and the application when it needs the database. */
import { userInfo } from 'node:os';
import { openApp, type App } from '@/lib/app';
import type { CheckInput, Principal, Role } from '@/lib/permissions';
import { DatabaseUnavailable } from '@/db/pg/client';
import { CliError } from './errors';
import { DbLocationError, locationTarget, parseDbLocation, type DbLocation } from '@/db/location';
import { isError } from '@/lib/errors';

export type Env = Readonly<Record<string, string | undefined>>;

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export interface CliContext {
  io: Io;
  env: Env;
}

/** What runs on PostgreSQL today, for the refusal of the commands that do not (cli/usage.ts says the same). */
export const POSTGRES_COMMANDS = 'swarm users, tokens, features, approvals, denials, hook, mcp pins, audit (events, report, verify, checkpoint, key, explain, archive), db migrate and db copy';

/**
 * The SQLite file of SWARM_DB, for the commands that run on SQLite only. A PostgreSQL URL is refused here, saying what
 * works on PostgreSQL today; any other URL is refused with the reason (never taken for a file name).
 */
export function dbPath(env: Env): string {
  const where = dbLocation(env);
  if (where.kind === 'postgres') {
    throw new CliError(
      `SWARM_DB names a PostgreSQL database (${where.shown}). On PostgreSQL this version runs ${POSTGRES_COMMANDS}; the other commands still run on SQLite (a file path).`,
    );
  }
  return where.path;
}

/** Where SWARM_DB points: a SQLite file or a PostgreSQL URL (CliError for anything else). */
export function dbLocation(env: Env, value = env.SWARM_DB): DbLocation {
  try {
    return parseDbLocation(value);
  } catch (error) {
    if (isError(error, DbLocationError)) throw new CliError(error.message);
    throw error;
  }
}

/**
 * Open the application SWARM_DB names, on SQLite or PostgreSQL (one-shot: no config polling, no server work), run `fn`,
 * and always close it. A PostgreSQL database that cannot be reached is a CliError naming it (without its password).
 */
export async function withAnyApp<T>(ctx: CliContext, fn: (app: App) => Promise<T>): Promise<T> {
  const where = dbLocation(ctx.env);
  let app: App;
  try {
    app = await openApp({ dbPath: locationTarget(where), env: ctx.env, watchConfig: false, signOnClose: true });
  } catch (error) {
    if (isError(error, DatabaseUnavailable)) throw new CliError(error.message);
    throw error;
  }
  try {
    return await fn(app);
  } finally {
    await app.close();
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

/** The REST route a CLI command stands for: the CLI is checked by the same rules as that route. */
export interface RouteEquivalent {
  method: string;
  path: string;
  /** the role the route declares with requireRole(...) */
  role: Role;
}

/**
 * The user named by --as, checked by the engine exactly as the REST route would check them: RBAC on the route's role,
 * flags on the path, YAML rules on method and path. A refusal is recorded as a denial, like the API's, and stops the
 * command. The CLI writes to the database directly, so this is what keeps it from being a way around the policy.
 */
export async function actAs(app: App, username: string, route: RouteEquivalent): Promise<Principal> {
  const user = await app.auth.findUser(username);
  if (!user) throw new CliError(`there is no user "${username}" (--as must name an existing user).`);
  const principal: Principal = { kind: 'user', id: user.username, role: user.disabled ? 'anonymous' : user.role };
  const input: CheckInput = { kind: 'http', principal, method: route.method, path: route.path, requiredRole: route.role };
  // The engine of PostgreSQL is asynchronous (its decide() refuses); SQLite decides at once, as before.
  const decision = await app.decisions.decide(input);
  if (decision.decision !== 'ALLOW') {
    const who = user.disabled ? `user "${username}" is disabled` : `user "${username}" (${user.role})`;
    throw new CliError(`refused for ${who} by ${decision.ruleSource}: ${decision.reason} The refusal is recorded as a denial.`);
  }
  return principal;
}

