/** Dispatch a command line to its command and turn every outcome into an exit status. */
import { AppError, messageOf, isError } from '@/lib/errors';
import { ConfigFileError } from '@/lib/permissions/yaml-config';
import { approvalsCommand } from './commands/approvals';
import { auditCommand } from './commands/audit';
import { dbCommand } from './commands/db';
import { denialsCommand } from './commands/denials';
import { featuresCommand } from './commands/features';
import { hookCommand } from './commands/hook';
import { mcpCommand } from './commands/mcp';
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

/** Each command, with its subcommand and the arguments after it (denials has no subcommand: it takes them all). */
const COMMANDS: Record<string, (ctx: CliContext, sub: string | undefined, args: string[]) => number | Promise<number>> = {
  users: usersCommand,
  tokens: tokensCommand,
  denials: (ctx, sub, args) => denialsCommand(ctx, sub === undefined ? args : [sub, ...args]),
  policy: policyCommand,
  features: featuresCommand,
  flags: featuresCommand,
  approvals: approvalsCommand,
  audit: auditCommand,
  db: dbCommand,
};

function dispatch(ctx: CliContext, argv: string[]): number | Promise<number> {
  const [command, sub, ...args] = argv;
  if (command === undefined || command === 'help' || wantsHelp(argv)) {
    ctx.io.out(USAGE);
    return 0;
  }
  if (!Object.hasOwn(COMMANDS, command)) throw new UsageError(`unknown command "${command}".`, [], true);
  return COMMANDS[command]!(ctx, sub, args);
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
export function main(
  ctx: CliContext,
  argv: string[],
  readStdin: () => Promise<string>,
  streams: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream } = { stdin: process.stdin, stdout: process.stdout },
): Promise<number> {
  if (argv[0] === 'hook' && !wantsHelp(argv)) {
    // The one command that reads stdin and may call the server: asynchronous.
    return settle(ctx, () => hookCommand(ctx.io, ctx.env, argv.slice(1), readStdin));
  }
  if (argv[0] === 'mcp' && !wantsHelp(argv)) {
    // The MCP gateway on stdio: stdin and stdout carry the protocol until the client closes them.
    return settle(ctx, () => mcpCommand({ ...ctx.io, ...streams }, ctx.env, argv[1], argv.slice(2)));
  }
  return run(ctx, argv);
}

function report(ctx: CliContext, error: unknown): number {
  const { io } = ctx;
  if (isError(error, CliError)) {
    io.err(`error: ${error.message}\n`);
    for (const d of error.details) io.err(`  ${d}\n`);
    if (isError(error, UsageError)) io.err(error.showUsage ? `\n${USAGE}` : 'Run "swarm help" for usage.\n');
    return error.exitCode;
  }
  if (isError(error, AppError)) {
    io.err(`error: ${error.message}\n`);
    return 1;
  }
  if (isError(error, ConfigFileError)) {
    // createApp loads the configuration files and refuses to run on a broken one.
    io.err(`error: the configuration file ${error.file} is invalid:\n${error.message}\n`);
    return 1;
  }
  const message = messageOf(error);
  io.err(`error: ${message}\n`);
  if (ctx.env.SWARM_DEBUG && error instanceof Error && error.stack) io.err(`${error.stack}\n`);
  return 1;
}
