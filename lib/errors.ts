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

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'AppError';
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** What an error says: its message, or the thrown value as text (a throw of something that is not an Error). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
