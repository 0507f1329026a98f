/**
 * The console's one way to the API: one function per method over fetch, one error shape, and the answer parsed with
 * the schema the server's own answer is defined by (lib/http/responses.ts, which the OpenAPI document shows too). A
 * changed answer becomes a clear error, never a broken page.
 *
 * Requests go through the global fetch at the moment of the call, so the session watch (app/_components/
 * session-watch.tsx), which observes window.fetch, hears every 401 and ends the session on every page at once; a
 * caller only decides what its own message says.
 */
import type { z } from 'zod';
import { apiErrorBodySchema, type ApiIssue } from '@/lib/http/responses';
import { brand, isError } from '@/lib/errors';

/** Sent on the console's own background requests (polls), so the server does not log them as a person's reads. */
export const BACKGROUND_HEADER = { 'x-swarm-background': '1' } as const;

export const NOT_REACHED = 'The server could not be reached. Check the connection and try again.';
export const NOT_UNDERSTOOD = 'The server sent an answer this page does not understand. Reload the page.';
export const SESSION_ENDED = 'Your session has ended: reload the page to sign in again.';

/**
 * Why a request did not give the answer the page needs: the HTTP status (0: the server was not reached), the server's
 * error code and message (or the client's own, for an answer that was not the API's), and the zod issues the server
 * listed for a request that is not valid.
 */
export class ApiError extends Error {
  static readonly kind = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: readonly ApiIssue[] = [],
    /** the server's further detail of the error, where it gave one (e.g. a proposal's problems at file:line:column) */
    readonly details?: unknown,
  ) {
    super(message);
    brand(this, ApiError);
  }

  /** The message with each issue the server named ("limit: Too small…"), in one sentence for a page to show. */
  get detail(): string {
    return this.issues.length ? `${this.message} (${this.issues.map((i) => `${i.path}: ${i.message}`).join('; ')})` : this.message;
  }
}

/** An error of any kind as an ApiError (a thrown non-ApiError becomes status 0 with its text). */
export function asApiError(error: unknown): ApiError {
  return isError(error, ApiError) ? error : new ApiError(0, 'CLIENT', error instanceof Error ? error.message : String(error));
}

/** An error in one sentence for a page: the server's words with its issues, or that the session has ended. */
export function errorSentence(error: unknown): string {
  const e = asApiError(error);
  return e.status === 401 ? SESSION_ENDED : e.detail;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** a poll or another refresh the person did not ask for (BACKGROUND_HEADER) */
  background?: boolean;
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

async function call<S extends z.ZodType>(method: Method, path: string, schema: S, body: unknown, options: CallOptions): Promise<z.output<S>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (options.background) Object.assign(headers, BACKGROUND_HEADER);
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: options.signal, cache: 'no-store' });
  } catch (error) {
    // An abort is the caller's own doing: it is passed on as it is, for the caller to ignore.
    if (options.signal?.aborted) throw error;
    throw new ApiError(0, 'UNREACHABLE', NOT_REACHED);
  }
  const json: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    const refused = apiErrorBodySchema.safeParse(json);
    if (!refused.success) throw new ApiError(response.status, `HTTP_${response.status}`, `The server answered ${response.status}.`);
    const { code, message, issues, details } = refused.data.error;
    throw new ApiError(response.status, code, message, issues ?? [], details);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new ApiError(response.status, 'UNREADABLE_ANSWER', NOT_UNDERSTOOD);
  return parsed.data;
}

/** GET `path`, its answer parsed with `schema`. */
export const apiGet = <S extends z.ZodType>(path: string, schema: S, options: CallOptions = {}) => call('GET', path, schema, undefined, options);
/** POST `body` as JSON to `path`. */
export const apiPost = <S extends z.ZodType>(path: string, body: unknown, schema: S, options: CallOptions = {}) => call('POST', path, schema, body, options);
/** PUT `body` as JSON to `path`. */
export const apiPut = <S extends z.ZodType>(path: string, body: unknown, schema: S, options: CallOptions = {}) => call('PUT', path, schema, body, options);
/** DELETE `path`, with a JSON body (the API's deletions take a reason). */
export const apiDelete = <S extends z.ZodType>(path: string, body: unknown, schema: S, options: CallOptions = {}) => call('DELETE', path, schema, body, options);
