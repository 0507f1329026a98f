/** The CLI's own errors: each carries its exit status (1 failure, 2 usage). Library errors are mapped in run.ts. */
import { brand } from '@/lib/errors';

export class CliError extends Error {
  static readonly kind: string = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
    /** further lines printed under the message, e.g. one per invalid option */
    readonly details: readonly string[] = [],
  ) {
    super(message);
    brand(this, CliError);
  }
}

/** The command line itself is wrong: unknown option, missing argument, invalid value. Exit status 2. */
export class UsageError extends CliError {
  static override readonly kind: string = 'UsageError';
  constructor(
    message: string,
    details: readonly string[] = [],
    /** print the whole usage text after the message (unknown commands), else a pointer to it */
    readonly showUsage = false,
  ) {
    super(message, 2, details);
    brand(this, UsageError);
  }
}
