/**
 * swarm users add|set-role, swarm tokens add|list|revoke|rotate: accounts and API tokens. A token is printed once and
 * stored only as a hash; it has scopes and (under a profile that asks) an expiry (issue 27). Every change is a security event attributed to the operating-system user who ran the command.
 * On SQLite and on PostgreSQL alike (SWARM_DB).
 */
import type { UserRole } from '@/lib/auth/store';
import { unlockUserName } from '@/lib/auth/login';
import { parseCommand, parseOptions, expectPositionals, requireOption, runSubcommand, valueOptions } from '@/cli/args';
import { withAnyApp, cliActor, type CliContext, type Io } from '@/cli/context';
import { CliError, UsageError } from '@/cli/errors';
import { cell, isoTime, printTable } from '@/cli/format';
import { parseDuration, tokenState, type IssuedToken } from '@/lib/auth/token-lifecycle';
import { parseScopes } from '@/lib/auth/token-cache';
import { isTokenScope, TOKEN_SCOPES, type TokenScope } from '@/lib/permissions';

export const USER_ROLES: readonly UserRole[] = ['viewer', 'auditor', 'operator', 'admin'];
const AGENT_NAME = /^[a-z][a-z0-9_-]*$/;

function isUserRole(value: string): value is UserRole {
  return (USER_ROLES as readonly string[]).includes(value);
}

function printToken(io: Io, token: string, owner: string, life?: Pick<IssuedToken, 'scopes' | 'expiresAt'>): void {
  io.out(`\n  ${token}\n\n`);
  io.out(`This token will not be shown again: store it now. It acts as ${owner}.\n`);
  if (life) io.out(`Scopes: ${life.scopes.join(', ')}. ${life.expiresAt === null ? 'It does not expire.' : `It expires ${isoTime(life.expiresAt)} UTC.`}\n`);
  io.out('Use it as: Authorization: Bearer <token>\n');
}

/** --expires: a duration (30d, 12h) or `never` (refused under a profile that limits a token's life). */
function expiresOption(value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'never') return null;
  const seconds = parseDuration(value);
  if (seconds === undefined || seconds === 0) throw new UsageError(`--expires is a duration such as 30d, 12h or 2w (or never), not "${value}".`);
  return seconds;
}

/** --scopes: comma-separated (decide, read, operate, admin). */
function scopesOption(value: string | undefined): TokenScope[] | undefined {
  if (value === undefined) return undefined;
  const scopes = value.split(',').map((s) => s.trim());
  const bad = scopes.filter((s) => !isTokenScope(s));
  if (bad.length > 0 || scopes.length === 0) throw new UsageError(`--scopes is a comma-separated list of ${TOKEN_SCOPES.join(', ')}, not "${value}".`);
  return scopes as TokenScope[];
}

export function usersCommand(ctx: CliContext, sub: string | undefined, args: string[]): Promise<number> {
  return runSubcommand(ctx, 'users', sub, args, { add: addUser, 'set-role': setRole, unlock });
}

function addUser(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, valueOptions('role', 'password', 'token-name'));
  const [name] = expectPositionals(positionals, ['NAME']);
  const role = requireOption(values.role, '--role', USER_ROLES.join(', '));
  if (!isUserRole(role)) throw new UsageError(`--role must be one of ${USER_ROLES.join(', ')}, not "${role}".`);
  return withAnyApp(ctx, async (app) => {
    const by = cliActor(ctx.env);
    const tokenName = values['token-name'] ?? `created by ${by}`;
    const created = await app.auth.createUserWithToken({ username: name!, role, password: values.password }, tokenName, by);
    ctx.io.out(`Created user "${created.user.username}" with role ${created.user.role}${values.password ? ' and a password' : ' (no password: API token only)'}.\n`);
    ctx.io.out(`API token for ${created.user.username}:\n`);
    printToken(ctx.io, created.token, `${created.user.username} (${created.user.role})`);
    if (!(await app.auth.hasAdmin())) {
      ctx.io.err('note: this database has no enabled admin yet; add one with: swarm users add NAME --role admin\n');
    }
    return 0;
  });
}

function setRole(ctx: CliContext, args: string[]): Promise<number> {
  const { positionals } = parseCommand(args, {});
  const [name, role] = expectPositionals(positionals, ['NAME', 'ROLE']);
  if (!isUserRole(role!)) throw new UsageError(`ROLE must be one of ${USER_ROLES.join(', ')}, not "${role}".`);
  return withAnyApp(ctx, async (app) => {
    const before = await app.auth.findUser(name!);
    if (!before) throw new CliError(`there is no user "${name}".`);
    await app.auth.setRole(name!, role, cliActor(ctx.env));
    ctx.io.out(`User "${name}" is now ${role} (was ${before.role}).\n`);
    return 0;
  });
}

/** Lift the lock a compliance profile put on a user name after failed sign-ins (recorded as auth.unlocked). */
function unlock(ctx: CliContext, args: string[]): Promise<number> {
  const { positionals } = parseCommand(args, {});
  const [name] = expectPositionals(positionals, ['NAME']);
  return withAnyApp(ctx, async (app) => {
    const wasLocked = await unlockUserName(app, name!, cliActor(ctx.env));
    ctx.io.out(wasLocked ? `User name "${name}" is unlocked; its failed sign-ins are forgotten.\n` : `User name "${name}" was not locked; its failed sign-ins are forgotten.\n`);
    return 0;
  });
}

export function tokensCommand(ctx: CliContext, sub: string | undefined, args: string[]): Promise<number> {
  return runSubcommand(ctx, 'tokens', sub, args, { add: addToken, list: listTokens, revoke: revokeToken, rotate: rotateToken });
}

function addToken(ctx: CliContext, args: string[]): Promise<number> {
  const values = parseOptions(args, valueOptions('agent', 'user', 'name', 'expires', 'scopes'));
  if ((values.agent === undefined) === (values.user === undefined)) {
    throw new UsageError('give exactly one of --agent NAME or --user NAME.');
  }
  const label = values.name ?? `created by ${cliActor(ctx.env)}`;
  if (label.trim().length === 0 || label.length > 200) throw new UsageError('--name is 1 to 200 characters.');
  if (values.agent !== undefined && (!AGENT_NAME.test(values.agent) || values.agent.length > 200)) {
    throw new UsageError(`--agent "${values.agent}" is not an agent name (lower-case letters, digits, "_" or "-").`);
  }
  const options = { expiresInSeconds: expiresOption(values.expires), scopes: scopesOption(values.scopes) };
  return withAnyApp(ctx, async (app) => {
    if (values.agent !== undefined) {
      const agent = values.agent;
      const issued = await app.auth.issueToken({ agent }, label, options, cliActor(ctx.env));
      ctx.io.out(`API token for agent "${agent}":\n`);
      printToken(ctx.io, issued.token, `agent ${agent} (and only that agent)`, issued);
      if (!app.agentsFile.current.agents.has(agent)) {
        ctx.io.err(`note: agent "${agent}" is not in ${app.agentsFile.path}; its calls are denied until it is added there.\n`);
      }
      return 0;
    }
    const username = values.user!;
    const user = await app.auth.findUser(username);
    if (!user) throw new CliError(`there is no user "${username}".`);
    if (user.disabled) throw new CliError(`user "${username}" is disabled; a token for it would not authenticate.`);
    const issued = await app.auth.issueToken({ username }, label, options, cliActor(ctx.env));
    ctx.io.out(`API token for user "${username}" (${user.role}):\n`);
    printToken(ctx.io, issued.token, `${username} (${user.role})`, issued);
    return 0;
  });
}

function listTokens(ctx: CliContext, args: string[]): Promise<number> {
  parseOptions(args, {});
  return withAnyApp(ctx, async (app) => {
    const rows = await app.auth.listTokens();
    const now = Date.now() / 1000;
    printTable(
      ctx.io,
      'No tokens.\n',
      ['ID', 'NAME', 'OWNER', 'SCOPES', 'CREATED (UTC)', 'EXPIRES (UTC)', 'LAST USED (UTC)', 'STATE'],
      rows.map((t) => [
        String(t.id),
        cell(t.name, 60),
        t.agentName ? `agent ${cell(t.agentName, 40)}` : `user ${cell(t.username ?? '?', 40)}`,
        parseScopes(t.scopes).join(','),
        isoTime(t.createdAt),
        t.expiresAt === null ? 'never' : isoTime(t.expiresAt),
        t.lastUsedAt === null ? '' : isoTime(t.lastUsedAt),
        tokenState(t, now),
      ]),
    );
    return 0;
  });
}

function revokeToken(ctx: CliContext, args: string[]): Promise<number> {
  const { positionals } = parseCommand(args, {});
  const [id] = expectPositionals(positionals, ['ID']);
  if (!/^\d{1,12}$/.test(id!)) throw new UsageError(`ID is a token id from "swarm tokens list", not "${id}".`);
  return withAnyApp(ctx, async (app) => {
    const t = await app.auth.revokeToken(Number(id), cliActor(ctx.env));
    ctx.io.out(`Revoked token ${t.id} (${cell(t.name)}): it no longer authenticates.\n`);
    return 0;
  });
}


/** A new token for a token's owner, name and scopes; the old one keeps working for the overlap (default 24h). */
function rotateToken(ctx: CliContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, valueOptions('overlap'));
  const [id] = expectPositionals(positionals, ['ID']);
  if (!/^\d{1,12}$/.test(id!)) throw new UsageError(`ID is a token id from "swarm tokens list", not "${id}".`);
  const overlap = parseDuration(values.overlap ?? '24h');
  if (overlap === undefined) throw new UsageError(`--overlap is a duration such as 24h, 30m or 0s, not "${values.overlap}".`);
  return withAnyApp(ctx, async (app) => {
    const r = await app.auth.rotateToken(Number(id), overlap, cliActor(ctx.env));
    ctx.io.out(`New API token ${r.id}, replacing token ${r.rotatedFrom}:\n`);
    printToken(ctx.io, r.token, 'the owner of the token it replaces', r);
    ctx.io.out(`Token ${r.rotatedFrom} stops working ${isoTime(r.oldExpiresAt)} UTC.\n`);
    return 0;
  });
}
