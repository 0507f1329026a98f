/**
 * Maybe-asynchronous steps: one algorithm written once as a generator that yields what it waits for, driven
 * synchronously while every answer is a plain value, and asynchronously from the first promise on. The engine's decision
 * path runs this way, so the same code decides with a synchronous store (SQLite: no promise, no microtask, nothing
 * added to the in-process cost) and with an asynchronous one (PostgreSQL).
 */
export type Step<T> = T | Promise<T>;

export function isPromise<T>(v: unknown): v is Promise<T> {
  return v instanceof Promise || (typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function');
}

/** Run the steps: a plain value when nothing was awaited, else a promise of it. A rejection is thrown into the steps. */
export function drive<T>(steps: Generator<unknown, T, unknown>): Step<T> {
  let r = steps.next();
  while (!r.done) {
    if (isPromise(r.value)) return continueAsync(steps, r.value);
    r = steps.next(r.value);
  }
  return r.value;
}

async function continueAsync<T>(steps: Generator<unknown, T, unknown>, pending: Promise<unknown>): Promise<T> {
  let waiting: unknown = pending;
  for (;;) {
    let settled: { ok: true; value: unknown } | { ok: false; error: unknown };
    try {
      settled = { ok: true, value: await waiting };
    } catch (error) {
      settled = { ok: false, error };
    }
    const r = settled.ok ? steps.next(settled.value) : steps.throw(settled.error);
    if (r.done) return r.value;
    waiting = r.value;
  }
}
