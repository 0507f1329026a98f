/**
 * The integrity badge's one summary, made from either source: the last `audit.verified` event of the trail (what the
 * page is rendered with) or a verification just run (GET /api/v1/audit/verify, lib/http/responses.ts).
 */
import { z } from 'zod';
import { verifyFailureSchema, type SecurityEventJson, type VerifyFailure, type VerifyReportJson } from '@/lib/http/responses';

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
  failures: VerifyFailure[];
}

/** The detail the verify route records with `audit.verified` (app/api/v1/audit/verify/route.ts). */
const verifiedDetailSchema = z.object({
  failures: z.array(verifyFailureSchema).default([]),
  chains: z.array(z.object({ chain: z.string(), rows: z.number(), head: z.string().nullable() })).default([]),
});

/** The badge's summary of a recorded `audit.verified` event; undefined when its detail is not understood. */
export function integrityFromEvent(e: Pick<SecurityEventJson, 'detail' | 'outcome' | 'timestamp' | 'actor'>): Integrity | undefined {
  const d = verifiedDetailSchema.safeParse(e.detail ?? {});
  if (!d.success) return undefined;
  return { ok: e.outcome === 'succeeded' && d.data.failures.length === 0, checkedAt: e.timestamp, by: e.actor, chains: d.data.chains, failures: d.data.failures };
}

export function integrityFromReport(r: VerifyReportJson): Integrity {
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
      witnessed: c.witnessed.checked,
    })),
    failures: r.failures,
  };
}
