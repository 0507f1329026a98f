/**
 * Security events that are not denials: today, configuration versions refused at reload (malformed, or failing their
 * policy tests). Append-only: triggers refuse UPDATE and DELETE (migration 0004). The evidence-trail issue grows this
 * into the one recorder of every security event.
 */
import { desc, eq } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { securityEvents, type SecurityEventRow } from '@/db/schema';

export interface SecurityEventInput {
  type: string;
  actor: string;
  outcome: 'succeeded' | 'refused' | 'failed';
  target?: string;
  detail?: Record<string, unknown>;
}

export class SecurityEventStore {
  constructor(private readonly db: Db) {}

  record(e: SecurityEventInput): void {
    this.db
      .insert(securityEvents)
      .values({ type: e.type, actor: e.actor, outcome: e.outcome, target: e.target ?? null, detailJson: e.detail ? JSON.stringify(e.detail) : null, timestamp: Date.now() / 1000 })
      .run();
  }

  list(type?: string, limit = 100): SecurityEventRow[] {
    return this.db.select().from(securityEvents).where(type ? eq(securityEvents.type, type) : undefined).orderBy(desc(securityEvents.id)).limit(limit).all();
  }
}
