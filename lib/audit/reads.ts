/**
 * Reading the audit trail is itself recorded (audit.queried, audit.exported): who read which filter. A page that
 * refreshes its query every few seconds would drown the trail in identical rows, so the same reader asking the same
 * filter again within five minutes is recorded once per process; every export is recorded.
 */
import type { App } from '@/lib/app';
import type { Principal, Role } from '@/lib/permissions';

const REPEAT_SECONDS = 300;
const MAX_REMEMBERED = 10_000;
const lastSeen = new Map<string, number>();

export function recordAuditRead(
  app: App,
  read: {
    /** the reader: a principal of the API, or the operating-system user of the CLI */
    principal: Principal | { kind: 'cli'; id: string; role: Role | null };
    what: 'permission_denials' | 'security_events';
    filter: Record<string, unknown>;
    export?: string;
    ip?: string;
  },
): Promise<void> | void {
  const filter = Object.fromEntries(Object.entries(read.filter).filter(([, v]) => v !== undefined));
  if (!read.export) {
    const key = `${read.principal.kind}:${read.principal.id}\u0000${read.what}\u0000${JSON.stringify(filter)}`;
    const now = Date.now() / 1000;
    const seen = lastSeen.get(key);
    if (seen !== undefined && now - seen < REPEAT_SECONDS) return;
    if (lastSeen.size >= MAX_REMEMBERED) lastSeen.clear();
    lastSeen.set(key, now);
  }
  const recorded = app.recorder.record({
    kind: 'audit',
    type: read.export ? 'audit.exported' : 'audit.queried',
    actor: read.principal.kind === 'agent' ? `agent:${read.principal.id}` : read.principal.id,
    actorRole: read.principal.role,
    outcome: 'succeeded',
    target: read.what,
    ip: read.ip ?? null,
    detail: { filter, ...(read.export ? { format: read.export } : {}) },
  });
  // On PostgreSQL the caller awaits the row: a read that cannot be recorded is refused, as on SQLite.
  if (recorded instanceof Promise) return recorded.then(() => undefined);
}
