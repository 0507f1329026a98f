/**
 * Reading the audit trail is itself recorded (audit.queried, audit.exported): who read which filter. A page that
 * refreshes its query every few seconds would drown the trail in identical rows, so the same reader asking the same
 * filter again within five minutes is recorded once per application (a process has one); every export is recorded.
 */
import { createHash } from 'node:crypto';
import type { App } from '@/lib/app';
import { BoundedCache } from '@/lib/permissions/bounded-cache';
import { principalLabel, type Principal, type Role } from '@/lib/permissions';

const REPEAT_SECONDS = 300;
/**
 * The most (reader, filter) pairs remembered, each by the SHA-256 of the pair (about 1.5 MB at most, however long the
 * filters readers type); one forgotten early is only recorded again.
 */
export const MAX_REMEMBERED_READS = 10_000;

/** Which reads were recorded within the last five minutes (by this process). */
export class RecentReads {
  private readonly lastSeen: BoundedCache<string, number>;

  constructor(max = MAX_REMEMBERED_READS) {
    this.lastSeen = new BoundedCache(max);
  }

  /** True when this reader read this filter within REPEAT_SECONDS (not recorded again); else remembers it now. */
  isRepeat(reader: { kind: string; id: string }, what: string, filter: Record<string, unknown>, now = Date.now() / 1000): boolean {
    const key = createHash('sha256').update(JSON.stringify([reader.kind, reader.id, what, filter])).digest('base64');
    const seen = this.lastSeen.get(key);
    if (seen !== undefined && now - seen < REPEAT_SECONDS) return true;
    this.lastSeen.set(key, now);
    return false;
  }

  /** pairs remembered now (at most MAX_REMEMBERED_READS) */
  get size(): number {
    return this.lastSeen.size;
  }
}

/** Each application remembers its own readers' recent reads. */
const recentReads = new WeakMap<App, RecentReads>();

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
  let recent = recentReads.get(app);
  if (!recent) recentReads.set(app, (recent = new RecentReads()));
  if (!read.export && recent.isRepeat(read.principal, read.what, filter)) return;
  const recorded = app.recorder.record({
    kind: 'audit',
    type: read.export ? 'audit.exported' : 'audit.queried',
    actor: principalLabel(read.principal),
    actorRole: read.principal.role,
    outcome: 'succeeded',
    target: read.what,
    ip: read.ip ?? null,
    detail: { filter, ...(read.export ? { format: read.export } : {}) },
  });
  // On PostgreSQL the caller awaits the row: a read that cannot be recorded is refused, as on SQLite.
  if (recorded instanceof Promise) return recorded.then(() => undefined);
}
