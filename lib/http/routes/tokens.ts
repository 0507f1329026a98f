/** API tokens, for admins (issue 27): the list /settings/tokens shows, a revocation, a rotation with an overlap. */
import { z } from 'zod';
import type { ListedToken } from '@/lib/auth/store';
import { parseScopes } from '@/lib/auth/token-cache';
import { parseDuration, tokenState } from '@/lib/auth/token-lifecycle';
import { requireRole, route } from '../route';

const now = () => Date.now() / 1000;
const idParams = z.object({ id: z.coerce.number().int().positive() });

/** A listed token as JSON (snake_case, as the API answers everywhere), with its state at `at`. */
export function tokenToJson(t: ListedToken, at: number) {
  return {
    id: Number(t.id),
    name: t.name,
    owner: t.agentName ? `agent:${t.agentName}` : (t.username ?? `user#${t.userId}`),
    owner_kind: t.agentName ? ('agent' as const) : ('user' as const),
    scopes: parseScopes(t.scopes),
    created_at: t.createdAt,
    expires_at: t.expiresAt,
    last_used_at: t.lastUsedAt,
    revoked_at: t.revokedAt,
    disabled_at: t.disabledAt,
    disabled_reason: t.disabledReason,
    rotated_from: t.rotatedFrom === null ? null : Number(t.rotatedFrom),
    state: tokenState(t, at),
  };
}

/** Every token, newest first: owner, name, scopes, creation, expiry, last use and state. Never a secret. */
export const listTokens = route({ role: requireRole('admin') }, async ({ app }) => {
  const at = now();
  return { tokens: (await app.auth.listTokens()).map((t) => tokenToJson(t, at)), now: at };
});

/** Revoke a token: it stops authenticating on every server within a second. */
export const revokeToken = route({ role: requireRole('admin'), params: idParams }, async ({ app, params, principal }) => {
  const row = await app.auth.revokeToken(params.id, principal.id);
  const owner = row.userId === null ? null : ((await app.auth.listTokens()).find((t) => t.id === row.id)?.username ?? null);
  return tokenToJson({ ...row, username: owner }, now());
});

const overlapSchema = z.strictObject({
  /** how long the old token keeps working, e.g. "24h" (default 24h; "0s": it stops at once) */
  overlap: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const seconds = parseDuration(v ?? '24h');
      if (seconds === undefined) {
        ctx.addIssue({ code: 'custom', message: 'a duration such as 24h, 30m, 7d or 0s' });
        return z.NEVER;
      }
      return seconds;
    }),
});

/** A new token for the owner, name and scopes of this one, which keeps working for the overlap. The secret is shown once. */
export const rotateToken = route({ role: requireRole('admin'), params: idParams, body: overlapSchema }, async ({ app, params, body, principal }) => {
  const r = await app.auth.rotateToken(params.id, body.overlap, principal.id);
  return { token: r.token, id: r.id, rotated_from: r.rotatedFrom, scopes: [...r.scopes], expires_at: r.expiresAt, old_expires_at: r.oldExpiresAt };
});
