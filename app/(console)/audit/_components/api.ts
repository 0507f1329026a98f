/**
 * The audit page's reads: the shapes of GET /api/v1/audit/events and GET /api/v1/audit/verify (zod at this edge, as
 * in the denial explorer: a changed answer becomes a clear message, not a broken page), and one integrity summary
 * that both the last `audit.verified` event and a fresh verification are turned into.
 */
import { z } from 'zod';

export const eventSchema = z.object({
  id: z.number(),
  decision_id: z.string().nullable(),
  type: z.string(),
  actor: z.string(),
  actor_role: z.string().nullable(),
  outcome: z.string(),
  target: z.string().nullable(),
  detail: z.unknown(),
  policy_revision: z.string().nullable(),
  ip: z.string().nullable(),
  timestamp: z.number(),
  row_hash: z.string().nullable(),
});
export type SecurityEvent = z.infer<typeof eventSchema>;

export const eventPageSchema = z.object({ events: z.array(eventSchema), next_cursor: z.number().nullable() });
export type EventPage = z.infer<typeof eventPageSchema>;

const failureSchema = z.object({ table: z.string(), id: z.number(), problem: z.string(), message: z.string() });

export const verifySchema = z.object({
  ok: z.boolean(),
  checked_at: z.number(),
  chains: z.array(
    z.object({
      chain: z.string(),
      rows_checked: z.number(),
      checkpoints: z.number(),
      checkpoints_valid: z.number(),
      covered_up_to: z.number().nullable().optional(),
      uncovered: z.object({ rows: z.number(), age_seconds: z.number().nullable() }).nullable().optional(),
      witnessed: z.object({ checked: z.number() }).optional(),
      head_hash: z.string().nullable(),
    }),
  ),
  failures: z.array(failureSchema),
});

/** What the integrity badge shows: one verification, from the trail or just run. */
export interface Integrity {
  ok: boolean;
  checkedAt: number;
  /** who ran it (from the recorded event; a fresh run is the reader's own) */
  by?: string;
  chains: {
    chain: string;
    rows: number;
    head: string | null;
    checkpoints?: number;
    checkpointsValid?: number;
    /** rows after the newest signed checkpoint, still waiting for one */
    awaiting?: number;
    /** witnessed checkpoints the trail was checked against */
    witnessed?: number;
  }[];
  failures: z.infer<typeof failureSchema>[];
}

const verifiedDetailSchema = z.object({
  failures: z.array(failureSchema).default([]),
  chains: z.array(z.object({ chain: z.string(), rows: z.number(), head: z.string().nullable() })).default([]),
});

/** The badge's summary of a recorded `audit.verified` event; undefined when its detail is not understood. */
export function integrityFromEvent(e: Pick<SecurityEvent, 'detail' | 'outcome' | 'timestamp' | 'actor'>): Integrity | undefined {
  const d = verifiedDetailSchema.safeParse(e.detail ?? {});
  if (!d.success) return undefined;
  return { ok: e.outcome === 'succeeded' && d.data.failures.length === 0, checkedAt: e.timestamp, by: e.actor, chains: d.data.chains, failures: d.data.failures };
}

export function integrityFromReport(r: z.infer<typeof verifySchema>): Integrity {
  return {
    ok: r.ok,
    checkedAt: r.checked_at,
    chains: r.chains.map((c) => ({
      chain: c.chain,
      rows: c.rows_checked,
      head: c.head_hash,
      checkpoints: c.checkpoints,
      checkpointsValid: c.checkpoints_valid,
      awaiting: c.uncovered?.rows ?? 0,
      witnessed: c.witnessed?.checked ?? 0,
    })),
    failures: r.failures,
  };
}

const errorSchema = z.object({ error: z.object({ message: z.string() }) });

/** GET a JSON answer of the API; throws an Error whose message can be shown as it is. */
export async function getJson<T>(url: string, schema: z.ZodType<T>): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: 'application/json' }, cache: 'no-store' });
  } catch {
    throw new Error('The server could not be reached. Check the connection and try again.');
  }
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) {
    const e = errorSchema.safeParse(body);
    if (response.status === 401) throw new Error('Your session has ended: reload the page to sign in again.');
    throw new Error(e.success ? e.data.error.message : `The server answered ${response.status}.`);
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new Error('The server sent an answer this page does not understand. Reload the page.');
  return parsed.data;
}
