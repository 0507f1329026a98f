/** The CLI's own errors: each carries its exit status (1 failure, 2 usage). Library errors are mapped in run.ts. */

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    /** further lines printed under the message, e.g. one per invalid option */
    readonly details: readonly string[] = [],
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The command line itself is wrong: unknown option, missing argument, invalid value. Exit status 2. */
export class UsageError extends CliError {
  constructor(
    message: string,
    details: readonly string[] = [],
    /** print the whole usage text after the message (unknown commands), else a pointer to it */
    readonly showUsage = false,
  ) {
    super(message, 2, details);
    this.name = 'UsageError';
  }
}
