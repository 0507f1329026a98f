/**
 * How the decision listener collects the Next.js server's metrics: serve.ts passes a secret made for this start in
 * SWARM_INTERNAL_SECRET to the Next.js process, which answers GET /internal/metrics (its registry as JSON) only to a
 * request carrying that secret. Next.js listens on loopback only, and the listener never passes /internal/ on.
 */
import { timingSafeEqual } from 'node:crypto';

export const INTERNAL_SECRET_ENV = 'SWARM_INTERNAL_SECRET';
export const INTERNAL_SECRET_HEADER = 'x-swarm-internal-secret';
export const INTERNAL_METRICS_PATH = '/internal/metrics';

/** Does the presented value equal the secret of this start? Never true when no secret was set. */
export function internalSecretMatches(presented: string | null | undefined, secret = process.env[INTERNAL_SECRET_ENV]): boolean {
  if (!secret || secret.length < 16 || !presented) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}
