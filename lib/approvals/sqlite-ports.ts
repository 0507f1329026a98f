/**
 * The decision's own approval ports on SQLite, synchronous: the state of a call, request an approval, consume one.
 * The engine decides a group of calls inside one transaction without yielding (lib/decisions/service.ts), so these
 * answer at once. The transitions are the store's own transaction bodies (SqlApprovalStore.requestSteps, consumeSteps),
 * driven synchronously by SqliteDatabase.transactionSync and told to the same listener in the same way, and the state
 * of a call is the same rules (rules.ts callState); only its two reads are SQLite's own, as prepared statements straight
 * on better-sqlite3 (measured: building the query on each call was a fifth of the listener's time in the mix, and
 * drizzle's mapping of a whole row about three times the query).
 * On PostgreSQL the engine uses the store's asynchronous methods.
 */
import type Database from 'better-sqlite3';
import type { SqliteDatabase } from '@/db/dialect';
import type { ApprovalRow } from '@/db/schema';
import type { ApprovalState, Principal } from '@/lib/permissions';
import type { CallBinding } from './binding';
import { callState, type CallStateReads, type NewestFacts } from './rules';
import { consumeSteps, NEWEST_FACTS, transitionOf, type ApprovalListener, type ApprovalRequest, type Decider, type SqlApprovalStore, type Transition } from './store';
import type { SQL } from 'drizzle-orm';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';
import { PROOF_QUERIES, trailSql, type TrailProof, type TrailRow } from './trail';

export class SqliteApprovalPorts {
  /** the newest approval of the call asked by one requester, from the approvals_call_newest index without a sort */
  private readonly newestLookup: Database.Statement<[string, string, string, string], NewestFacts>;
  /** the audit events of one approval (security_events_target): read only when an approved, unused one would be used */
  private readonly trailLookup: Database.Statement<[string], TrailRow>;
  /** what proves the trail still holds every event of an approval (trail.ts proofProblem) */
  private readonly proofReads: {
    checkpoint: Database.Statement<[], { size: number; note: string }>;
    rowHash: Database.Statement<[number], { rowHash: string | null }>;
    count: Database.Statement<[number, number], { n: number }>;
  };

  constructor(
    private readonly database: SqliteDatabase,
    private readonly store: SqlApprovalStore,
    private readonly listener: ApprovalListener,
    private readonly binding: () => CallBinding,
    private readonly proof: () => TrailProof,
  ) {
    this.newestLookup = database.client.prepare(
      `SELECT ${NEWEST_FACTS} FROM approvals WHERE agent_name = ? AND tool_name = ? AND arguments_hash = ? AND requested_by = ? ORDER BY requested_at DESC, id DESC LIMIT 1`,
    );
    this.trailLookup = database.client.prepare(trailSql('?'));
    const text = (q: SQL) => new SQLiteSyncDialect().sqlToQuery(q).sql;
    this.proofReads = {
      checkpoint: database.client.prepare<[], { size: number; note: string }>(text(PROOF_QUERIES.checkpoint)),
      rowHash: database.client.prepare<[number], { rowHash: string | null }>(text(PROOF_QUERIES.rowHash(0))),
      count: database.client.prepare<[number, number], { n: number }>(text(PROOF_QUERIES.count(0, 0))),
    };
  }

  /**
   * The store's stateFor, at once (rules.ts callState, its reads answered by the prepared statements). As there, a
   * doubt is read again in one snapshot (another process may have changed the call between the two reads).
   */
  stateFor(agent: string, tool: string, args: unknown, ttlSeconds: number, principal: Principal): ApprovalState {
    const hash = this.binding().bind(args);
    const p = this.proofReads;
    const reads: CallStateReads = {
      newest: (by) => this.newestLookup.get(agent, tool, hash, by),
      trail: (id) => this.trailLookup.all(id),
      checkpoint: () => p.checkpoint.get(),
      rowHash: (id) => p.rowHash.get(id),
      count: (from, to) => p.count.get(from, to),
      proof: this.proof(),
    };
    const read = () => {
      const steps = callState(reads, { agentName: agent, toolName: tool, argumentsHash: hash }, ttlSeconds, principal);
      let next = steps.next();
      while (!next.done) next = steps.next(next.value);
      return next.value;
    };
    const state = read();
    if (state.status !== 'unverified') return state;
    return this.database.transactionSync(function* () {
      return read();
    }, { readOnly: true });
  }

  /** The store's request, at once. */
  request(r: ApprovalRequest): ApprovalRow {
    const hash = this.binding().bind(r.arguments);
    return this.transition((tx, tell) => this.store.requestSteps(tx, tell, r, hash));
  }

  /** The store's consume, at once. */
  consume(id: string, by: Decider): boolean {
    return this.transition((tx, tell) => consumeSteps(tx, tell, id, by));
  }

  private transition<T>(body: Transition<T>): T {
    const t = transitionOf(this.listener, body);
    const out = this.database.transactionSync(t.body);
    t.committed();
    return out;
  }
}
