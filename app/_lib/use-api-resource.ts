'use client';

/**
 * A GET of the API as React state (over app/_lib/api-client.ts): the last answer stays on screen while the next one
 * loads, an answer that arrives after the view has moved on is dropped (its request is aborted), and a failure is an
 * ApiError the page can say in words. The explorers read every view through it.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import type { z } from 'zod';
import { apiGet, asApiError, type ApiError } from './api-client';

export interface Resource<T> {
  data: T | undefined;
  /** the answer on screen belongs to an earlier request: a new one is loading */
  stale: boolean;
  loading: boolean;
  error: ApiError | undefined;
  reload: () => void;
}

/** An answer the server rendered the page with: used for its URL on the first render, without asking again. */
export interface Seed<T> {
  url: string;
  data: T;
}

/** GET `url` (null: nothing to load) and keep its answer until the next one arrives. */
export function useApiResource<S extends z.ZodType>(url: string | null, schema: S, seed?: Seed<z.output<S>>): Resource<z.output<S>> {
  type T = z.output<S>;
  const [state, setState] = useState<{ url: string | null; data?: T; error?: ApiError; loading: boolean }>(() =>
    seed && seed.url === url ? { url, data: seed.data, loading: false } : { url: null, loading: url !== null },
  );
  const [attempt, setAttempt] = useState(0);
  const schemaRef = useRef(schema);
  /** the seed answers the first render only: a later visit to its URL (back, forward) is read again */
  const seeded = useRef(seed !== undefined && seed.url === url);
  useEffect(() => {
    if (seeded.current) {
      seeded.current = false;
      return;
    }
    if (url === null) {
      setState({ url: null, loading: false });
      return;
    }
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true, error: undefined }));
    apiGet(url, schemaRef.current, { signal: controller.signal }).then(
      (data: T) => setState({ url, data, loading: false }),
      (error: unknown) => {
        if (controller.signal.aborted) return;
        setState((s) => ({ ...s, url, error: asApiError(error), loading: false }));
      },
    );
    return () => controller.abort();
  }, [url, attempt]);
  const reload = useCallback(() => setAttempt((n) => n + 1), []);
  return { data: state.data, stale: state.url !== url || state.loading, loading: state.loading, error: state.error, reload };
}

/** The resource marked stale while `moving` (the address already names the next view, use-url-state.ts). */
export function staleWhile<T>(moving: boolean, resource: Resource<T>): Resource<T> {
  return moving && !resource.stale ? { ...resource, stale: true } : resource;
}
