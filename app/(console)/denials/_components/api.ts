'use client';

/**
 * The explorer's reads of the denials API: response schemas (zod at this edge too: a changed server answer becomes a
 * clear error state, not a broken table) and a small fetch hook that keeps the last answer on screen while the next
 * one loads, and drops answers that arrive after the view has moved on.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { z } from 'zod';

export const denialSchema = z.object({
  id: z.number(),
  tool_call_id: z.string().nullable(),
  tool_name: z.string(),
  agent_name: z.string().nullable(),
  arguments_json: z.string().nullable(),
  rule_source: z.string(),
  reason: z.string().nullable(),
  user_role: z.string().nullable(),
  http_method: z.string().nullable(),
  http_path: z.string().nullable(),
  timestamp: z.number(),
  principal: z.string().nullable(),
  /** joins the row to the caller's decision, and the configuration it was made under */
  decision_id: z.string().nullable().default(null),
  policy_revision: z.string().nullable().default(null),
  masked_paths: z.array(z.string()).default([]),
});
export type Denial = z.infer<typeof denialSchema>;

export const pageSchema = z.object({ denials: z.array(denialSchema), next_cursor: z.string().nullable() });
export type DenialPage = z.infer<typeof pageSchema>;

export const detailSchema = denialSchema.extend({
  trace: z.array(z.object({ decision: z.string(), priority: z.number(), rule_source: z.string(), reason: z.string() })).nullable(),
});
export type DenialDetail = z.infer<typeof detailSchema>;

const ranked = <T extends z.ZodType>(value: T) => z.array(z.object({ value, count: z.number() }));
export const summarySchema = z.object({
  total: z.number(),
  top_agents: ranked(z.string().nullable()),
  top_rule_sources: ranked(z.string()),
  top_tools: ranked(z.string()),
  families: ranked(z.string()),
});
export type Summary = z.infer<typeof summarySchema>;

export const histogramSchema = z.object({
  from: z.number(),
  to: z.number(),
  bucket_seconds: z.number(),
  families: z.array(z.string()),
  buckets: z.array(z.object({ start: z.number(), end: z.number(), total: z.number(), counts: z.record(z.string(), z.number()) })),
});
export type Histogram = z.infer<typeof histogramSchema>;

const errorSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
});

export interface ApiError {
  status: number;
  message: string;
}

async function readJson<T>(url: string, schema: z.ZodType<T>, signal: AbortSignal): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, { signal, headers: { accept: 'application/json' }, cache: 'no-store' });
  } catch (error) {
    if (signal.aborted) throw error;
    throw { status: 0, message: 'The server could not be reached. Check the connection and try again.' } satisfies ApiError;
  }
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) {
    const e = errorSchema.safeParse(body);
    const issues = e.success && e.data.error.issues?.length ? ` (${e.data.error.issues.map((i) => `${i.path}: ${i.message}`).join('; ')})` : '';
    const message = e.success ? `${e.data.error.message}${issues}` : `The server answered ${response.status}.`;
    throw { status: response.status, message } satisfies ApiError;
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw { status: response.status, message: 'The server sent an answer this page does not understand. Reload the page.' } satisfies ApiError;
  return parsed.data;
}

export interface Resource<T> {
  data: T | undefined;
  /** the answer on screen belongs to an earlier request: a new one is loading */
  stale: boolean;
  loading: boolean;
  error: ApiError | undefined;
  reload: () => void;
}

/** GET `url` (null: nothing to load) and keep its answer until the next one arrives. */
export function useApi<T>(url: string | null, schema: z.ZodType<T>): Resource<T> {
  const [state, setState] = useState<{ url: string | null; data?: T; error?: ApiError; loading: boolean }>({ url: null, loading: url !== null });
  const [attempt, setAttempt] = useState(0);
  const schemaRef = useRef(schema);
  useEffect(() => {
    if (url === null) {
      setState({ url: null, loading: false });
      return;
    }
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true, error: undefined }));
    readJson(url, schemaRef.current, controller.signal).then(
      (data) => setState({ url, data, loading: false }),
      (error: unknown) => {
        if (controller.signal.aborted) return;
        const e = typeof error === 'object' && error !== null && 'message' in error ? (error as ApiError) : { status: 0, message: String(error) };
        setState((s) => ({ ...s, url, error: e, loading: false }));
      },
    );
    return () => controller.abort();
  }, [url, attempt]);
  const reload = useCallback(() => setAttempt((n) => n + 1), []);
  return { data: state.data, stale: state.url !== url || state.loading, loading: state.loading, error: state.error, reload };
}
