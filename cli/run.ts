/** Dispatch a command line to its command and turn every outcome into an exit status. */
import { AppError } from '@/lib/errors';
import { ConfigFileError } from '@/lib/permissions/yaml-config';
import { approvalsCommand } from './commands/approvals';
import { auditCommand } from './commands/audit';
import { dbCommand } from './commands/db';
import { denialsCommand } from './commands/denials';
import { featuresCommand } from './commands/features';
import { hookCommand } from './commands/hook';
import { policyCommand } from './commands/policy';
import { tokensCommand, usersCommand } from './commands/users';
import type { CliContext } from './context';
import { CliError, UsageError } from './errors';
import { USAGE } from './usage';

/** Options before a `--` that ask for help. */
function wantsHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

function dispatch(ctx: CliContext, argv: string[]): number | Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || wantsHelp(argv)) {
    ctx.io.out(USAGE);
    return 0;
  }
  const [sub, ...args] = rest;
  switch (command) {
    case 'users':
      return usersCommand(ctx, sub, args);
    case 'tokens':
      return tokensCommand(ctx, sub, args);
    case 'denials':
      return denialsCommand(ctx, rest);
    case 'policy':
      return policyCommand(ctx, sub, args);
    case 'features':
    case 'flags':
      return featuresCommand(ctx, sub, args);
    case 'approvals':
      return approvalsCommand(ctx, sub, args);
    case 'audit':
      return auditCommand(ctx, sub, args);
    case 'db':
      return dbCommand(ctx, sub, args);
    default:
      throw new UsageError(`unknown command "${command}".`, [], true);
  }
}

/** A command's exit status, whether it finishes at once or later (db backup); what it throws is reported as one. */
async function settle(ctx: CliContext, command: () => number | Promise<number>): Promise<number> {
  try {
    return await command();
  } catch (error) {
    return report(ctx, error);
  }
}

/** Run a command line (every command but `hook`, which reads stdin: main). */
export const run = (ctx: CliContext, argv: string[]): Promise<number> => settle(ctx, () => dispatch(ctx, argv));

/**
 * The whole command line, as `swarm` runs it: its exit status, never process.exit. The process entry (main.ts) gives it
 * the process's argv, environment, stdout/stderr and stdin; the tests run it in process with their own.
 */
export function main(ctx: CliContext, argv: string[], readStdin: () => Promise<string>): Promise<number> {
  if (argv[0] === 'hook' && !argv.includes('--help') && !argv.includes('-h')) {
    // The one command that reads stdin and may call the server: asynchronous.
    return settle(ctx, () => hookCommand(ctx.io, ctx.env, argv.slice(1), readStdin));
  }
  return run(ctx, argv);
}

function report(ctx: CliContext, error: unknown): number {
  const { io } = ctx;
  if (error instanceof UsageError) {
    io.err(`error: ${error.message}\n`);
    for (const d of error.details) io.err(`  ${d}\n`);
    io.err(error.showUsage ? `\n${USAGE}` : 'Run "swarm help" for usage.\n');
    return error.exitCode;
  }
  if (error instanceof CliError) {
    io.err(`error: ${error.message}\n`);
    for (const d of error.details) io.err(`  ${d}\n`);
    return error.exitCode;
  }
  if (error instanceof AppError) {
    io.err(`error: ${error.message}\n`);
    return 1;
  }
  if (error instanceof ConfigFileError) {
    // createApp loads the configuration files and refuses to run on a broken one.
    io.err(`error: the configuration file ${error.file} is invalid:\n${error.message}\n`);
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.err(`error: ${message}\n`);
  if (ctx.env.SWARM_DEBUG && error instanceof Error && error.stack) io.err(`${error.stack}\n`);
  return 1;
}
