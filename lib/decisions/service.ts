/**
 * The decision service: the one way anything asks for a decision. It owns what surrounds the engine's pure evaluation
 * (the before_tool_call hooks, approvals, recording) and offers three entry points:
 *
 * - `authorize(input)`: the question only; no hook runs, nothing is written (a dry run, a page deciding what to show).
 * - `decide(input, meta)`: one call, decided and recorded (its hooks may be waited for first).
 * - `decideGroup(items, meta)`: several calls in order, their hooks run first (outside any transaction), then decided
 *   in one transaction: on SQLite synchronously inside BEGIN IMMEDIATE, so nothing else runs while it holds the file's
 *   writer lock; on PostgreSQL in order, each committed before the next.
 *
 * And for the decision listener, `callGroups()`: where it hands its calls, committed together in groups on SQLite and
 * each as it comes on PostgreSQL (lib/decisions/group-commit.ts).
 *
 * Whether the store answers synchronously (SQLite) is known here and in the composition root only.
 */
import { announceWrite } from '@/db/write-intent';
import { isPromise, type RuleSource, type CheckInput, type CheckResult, type DecisionMeta, type PermissionEngine, type PreparedCall, type ToolCallFinished } from '@/lib/permissions';
import type Database from 'better-sqlite3';
import { Concurrent, GroupCommit, type CallGroups } from './group-commit';

/** A call of a group: decided, or (a dry run) only asked. */
export type GroupItem = CheckInput | { dryRun: CheckInput };

export interface DecisionServiceOptions {
  engine: PermissionEngine;
  /** SQLite: the connection whose transaction a group commits in (absent on PostgreSQL) */
  sqlite?: Database.Database;
  /** SQLite: keep the token lookups of a group on one auth generation (lib/auth/tokens-sqlite.ts); returns its end */
  pinTokens?: () => () => void;
  /** after a rolled-back group: forget what was remembered inside it (the revisions stored with its rows) */
  afterRollback?: () => void;
}

export class DecisionService {
  private readonly engine: PermissionEngine;
  private readonly sqlite: Database.Database | undefined;
  /**
   * Set while a group of the decision listener's calls is decided inside one transaction (SQLite, callGroups): a call
   * whose hooks would have to be waited for is refused (HookWouldWait) instead of waiting with the lock held.
   */
  private holding = false;

  constructor(private readonly options: DecisionServiceOptions) {
    this.engine = options.engine;
    this.sqlite = options.sqlite;
  }

  /** The decision for this input, without running a hook or writing anything. */
  authorize(input: CheckInput): Promise<CheckResult> {
    return this.sqlite ? settle(() => this.engine.check(input)) : this.engine.checkAsync(input);
  }

  /**
   * Decide one call and record it: a DENY is written before this resolves, an ASK gets its approval request, an ALLOW
   * that used an approval consumes it. Resolves in the same turn when no hook had to be waited for (SQLite).
   */
  decide(input: CheckInput, meta: DecisionMeta = {}): Promise<CheckResult> {
    if (!this.sqlite) return this.engine.decideAsync(input, meta);
    return settle(() => {
      const prepared = this.engine.prepare(input, { sync: this.holding });
      return isPromise<PreparedCall>(prepared) ? prepared.then((p) => this.engine.commit(p, meta)) : this.engine.commit(prepared, meta);
    });
  }

  /**
   * Decide for a caller still being identified: `who` is known at once where its port answers at once (a token on
   * SQLite, the decision listener's path), else a promise; `ask(who)` is the question. Either way the caller waits once.
   */
  decideFor<W>(who: W | Promise<W>, ask: (who: W) => CheckInput, meta: DecisionMeta = {}): Promise<CheckResult> {
    if (isPromise<W>(who)) return who.then((w) => this.decide(ask(w), meta));
    try {
      return this.decide(ask(who), meta);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Decide several calls in order; `stop(result)` ends the group early (AuthZEN's evaluation semantics). On SQLite the
   * group is one transaction: its rows commit together before any answer, and a failure to record any of them refuses
   * the whole group. On PostgreSQL each is committed before the next, and a failure refuses the rest.
   */
  async decideGroup(items: readonly GroupItem[], meta: DecisionMeta = {}, stop?: (r: CheckResult) => boolean): Promise<CheckResult[]> {
    const prepared: (PreparedCall | { dryRun: CheckInput })[] = [];
    for (const item of items) {
      if ('dryRun' in item) prepared.push(item);
      else {
        const p = this.engine.prepare(item, { sync: this.holding });
        prepared.push(isPromise<PreparedCall>(p) ? await p : p);
      }
    }
    const sqlite = this.sqlite;
    if (!sqlite) {
      const out: CheckResult[] = [];
      for (const p of prepared) {
        const r = 'dryRun' in p ? await this.engine.checkAsync(p.dryRun) : await this.engine.commitAsync(p, meta);
        out.push(r);
        if (stop?.(r)) break;
      }
      return out;
    }
    const run = (): CheckResult[] => {
      const out: CheckResult[] = [];
      for (const p of prepared) {
        const r = 'dryRun' in p ? this.engine.check(p.dryRun) : this.engine.commit(p, meta);
        out.push(r);
        if (stop?.(r)) break;
      }
      return out;
    };
    // IMMEDIATE: the write lock first, so that a read that turns into a write cannot fail on another writer's commit.
    // In the decision listener's group commit, the group joins the listener's transaction (announced: it opens it).
    announceWrite(sqlite);
    try {
      return sqlite.transaction(run).immediate();
    } catch (error) {
      this.options.afterRollback?.();
      throw error;
    }
  }

  /** The rule sources decisions ask, in trace order (the built-in ones and any registered): what /transparency lists. */
  sources(): readonly RuleSource[] {
    return this.engine.listSources();
  }

  /** An allowed call finished: the after_tool_call hooks hear of it (never awaited). */
  finished(call: ToolCallFinished): void {
    this.engine.finished(call);
  }

  /**
   * Where the decision listener hands its calls (each decides through this service): on SQLite they are decided in
   * groups, one transaction each, without yielding; on PostgreSQL each as it comes. `close()` when the listener closes.
   */
  callGroups<T>(): CallGroups<T> {
    const sqlite = this.sqlite;
    if (!sqlite) return new Concurrent<T>();
    const noPin = () => () => {};
    return new GroupCommit<T>(sqlite, {
      pinTokens: this.options.pinTokens ?? noPin,
      hold: (holding) => {
        this.holding = holding;
      },
      afterRollback: () => this.options.afterRollback?.(),
    });
  }
}

/** A synchronous computation as a promise: its value, or its error as a rejection (never a throw from the call). */
function settle<T>(compute: () => T | Promise<T>): Promise<T> {
  try {
    return Promise.resolve(compute());
  } catch (error) {
    return Promise.reject(error);
  }
}
