/**
 * One error type for the whole application, with codes, and the one map of every code any error of the product carries
 * (AppError's and the coded errors of the engine, the audit trail and the database): its HTTP status, and for the
 * failures a caller cannot act on by changing its request, the code and words an answer gives instead (the internal
 * message is logged, never sent). lib/http answers from this map; the CLI maps the code to an exit status.
 * tests/errors-map.test.ts fails when a `readonly code = '...'` or an `AppError('...')` anywhere is not in it.
 */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  INVARIANT: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_REQUESTS: 429,
  POLICY_INVALID: 422,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** How the answer of a coded error that is not an AppError reads; `retry`: the caller may try again in a second. */
export interface CodedErrorAnswer {
  status: number;
  /** the code the answer carries (default: the error's own) */
  code?: string;
  /** the words the answer gives instead of the error's own message (absent: its message is the answer) */
  message?: string;
  retry?: boolean;
  /** the failure is the server's: its message is logged with the error */
  log?: string;
}

/** The other coded errors of the product, by code. */
export const CODED_ERRORS: Readonly<Record<string, CodedErrorAnswer>> = {
  // the engine
  PERMISSION_DENIED: { status: 403, code: 'FORBIDDEN' },
  APPROVAL_REQUIRED: { status: 409, code: 'CONFLICT' },
  INVALID_ARGUMENTS: { status: 400, code: 'BAD_REQUEST' },
  AUDIT_UNAVAILABLE: {
    status: 503,
    message: 'The request was refused because it could not be recorded in the audit trail. Try again; if it persists, the server needs attention.',
    log: 'The audit trail could not be written',
  },
  // the active revision of the rules cannot be used (its content in the database changed): nothing is decided
  RULES_UNAVAILABLE: {
    status: 503,
    message:
      'Nothing was decided: the rules in force cannot be read (the active policy revision in the database no longer matches itself). An administrator restores it or rolls back (npx swarm policy rollback --emergency); /api/v1/ready says which.',
    log: 'The rules in force cannot be used',
  },
  HOOK_WOULD_WAIT: { status: 503, code: 'RETRY', message: 'The hooks of this call changed while it was being decided. Try again.', retry: true },
  ENGINE_IS_ASYNC: { status: 500, code: 'INTERNAL', message: 'Something went wrong on the server; it has been logged.', log: 'Unhandled error in route' },
  // the database
  DATABASE_UNAVAILABLE: {
    status: 503,
    message: 'The database is not available, so nothing was decided or recorded. Try again in a moment.',
    retry: true,
    log: 'The database is not available',
  },
  TRANSACTION_WOULD_WAIT: { status: 500, code: 'INTERNAL', message: 'Something went wrong on the server; it has been logged.', log: 'Unhandled error in route' },
  DB_LOCATION_INVALID: { status: 500, code: 'INTERNAL', message: 'Something went wrong on the server; it has been logged.', log: 'Unhandled error in route' },
  // a configuration whose policy tests fail (refused; the message names the failing cases)
  POLICY_TESTS_FAILED: { status: 422, code: 'POLICY_INVALID' },
  // configuration and the audit trail's keys: a server that cannot start or sign says so in its log
  CONFIG_INVALID: { status: 500, code: 'INTERNAL', message: 'Something went wrong on the server; it has been logged.', log: 'Unhandled error in route' },
  KEY_BESIDE_DATABASE: { status: 500, code: 'INTERNAL', message: 'Something went wrong on the server; it has been logged.', log: 'Unhandled error in route' },
  KEY_DIR_REQUIRED: { status: 500, code: 'INTERNAL', message: 'Something went wrong on the server; it has been logged.', log: 'Unhandled error in route' },
  SIGNING_KEY_MISSING: { status: 500, code: 'INTERNAL', message: 'Something went wrong on the server; it has been logged.', log: 'Unhandled error in route' },
  PINNED_KEYS_UNREADABLE: { status: 500, code: 'INTERNAL', message: 'Something went wrong on the server; it has been logged.', log: 'Unhandled error in route' },
  WITNESS_CONFIG_INVALID: { status: 500, code: 'INTERNAL', message: 'Something went wrong on the server; it has been logged.', log: 'Unhandled error in route' },
};

/**
 * Recognising the product's errors by what they are, not by which copy of a class made them. The built server holds a
 * class once per chunk that bundles it, and an error made by one copy fails `instanceof` against another (in-process
 * tests see one copy, so only the build shows it). So each error class of the product names its kind
 * (`static readonly kind`), its constructor calls brand(this, TheClass), and isError(value, TheClass) asks the kinds
 * the error carries under a registered symbol, which every copy of every bundle shares. tests/error-brand.test.ts fails
 * on an error class without a kind and on an `instanceof` of one outside this file.
 */
const KINDS = Symbol.for('swarm-permissions.error-kinds');

/** A class of the product's errors, as the recogniser knows it. */
export interface ErrorKind<T> {
  readonly kind: string;
  readonly prototype: T;
}

/** Marks an error with its class's kind (a subclass's error carries its own kind and its parents'); sets its name. */
export function brand(error: Error, cls: ErrorKind<unknown>): void {
  const kinds = (error as unknown as { [KINDS]?: string[] })[KINDS];
  if (kinds) kinds.push(cls.kind);
  else Object.defineProperty(error, KINDS, { value: [cls.kind], enumerable: false, configurable: false, writable: false });
  error.name = cls.kind;
}

/** Whether a value is an error of this class (or of a subclass of it), whichever copy of the class made it. */
export function isError<T>(value: unknown, cls: ErrorKind<T>): value is T {
  if (typeof value !== 'object' || value === null) return false;
  const kinds = (value as { [KINDS]?: unknown })[KINDS];
  return Array.isArray(kinds) && kinds.includes(cls.kind);
}

export class AppError extends Error {
  static readonly kind = 'AppError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    brand(this, AppError);
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** What an error says: its message, or the thrown value as text (a throw of something that is not an Error). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
