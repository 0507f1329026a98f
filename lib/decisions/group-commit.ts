/**
 * The commit strategies of the decision listener's calls (lib/server/front.ts hands each call to
 * DecisionService.callGroups() and never asks which database is behind it):
 *
 * - SQLite, GroupCommit: the calls that arrived while the previous group was being decided are decided together, and
 *   their answers leave only after the group's commit: no denial is acknowledged before it is durable, and concurrent
 *   denials share one commit instead of paying one each.
 * - PostgreSQL, Concurrent: each call is decided as it comes, side by side with the others on the pool's connections;
 *   the recorder commits the denials of concurrent calls together (one transaction, one turn of the chain's lock, one
 *   flush of the WAL), and each answer leaves only after the commit that holds its denial.
 */
import { onWriteIntent } from '@/db/write-intent';
import type Database from 'better-sqlite3';

/** One call of the decision listener: it decides through the decision service and builds its answer. */
export interface GroupCall<T> {
  /** decide and build the answer */
  run(): Promise<T>;
  /** the answer for a run() that threw */
  failure(error: unknown): T;
  /** does this answer say the call failed (on SQLite what it wrote is then undone alone) */
  failed(answer: T): boolean;
  /** send the answer, once what the call decided is durable; undefined: its group could not be committed */
  settle(answer: T | undefined): void;
}

/** Where the listener hands its calls. */
export interface CallGroups<T> {
  add(call: GroupCall<T>): void;
  /** the listener closed: stop hearing of the connection's writes */
  close(): void;
}

/** The most calls one commit takes. */
export const MAX_GROUP = 64;

export interface GroupCommitPorts {
  /** keep the token lookups of a group on one auth generation; returns the function that ends it */
  pinTokens(): () => void;
  /** a group is (true) or is no longer (false) decided inside the transaction: hooks that would wait are refused */
  hold(holding: boolean): void;
  /** after a rollback: forget what was remembered inside it (the revisions stored with its rows) */
  afterRollback(): void;
}

/**
 * SQLite. The transaction opens at the group's first write (db/write-intent.ts: the recorder, the approval store and
 * the hook rate counter announce theirs), as BEGIN IMMEDIATE, so a read that turns into a write cannot fail on another
 * writer's commit. Each decision from then on runs in a savepoint of its own, so that one that cannot be recorded is
 * undone alone and answered 503. A group of calls that write nothing (allowed calls) never takes SQLite's write lock:
 * several listener processes (lib/server/workers.ts) decide those side by side.
 *
 * The calls are async only to read their body, which is read before (a resolved promise here), and to wait for webhook
 * and shell hooks, which are refused while a group holds the transaction (the listener passes such calls to Next.js):
 * a group runs from start to commit without yielding to other I/O, so nothing else writes inside its transaction.
 */
export class GroupCommit<T> implements CallGroups<T> {
  private queue: GroupCall<T>[] = [];
  private scheduled = false;
  /** a group is being decided: announced writes open its transaction */
  private deciding = false;
  /** the current decision runs in a savepoint */
  private inSavepoint = false;
  /** the group's transaction is open */
  private open = false;
  private readonly stopListening: () => void;

  /** The statements of every group, prepared once (parsing them per request was a measurable part of its cost). */
  private readonly sql: Record<'begin' | 'savepoint' | 'rollbackTo' | 'release' | 'commit', { run(): unknown }>;

  constructor(
    private readonly sqlite: Database.Database,
    private readonly ports: GroupCommitPorts,
  ) {
    const s = sqlite;
    this.sql = {
      begin: s.prepare('BEGIN IMMEDIATE'),
      savepoint: s.prepare('SAVEPOINT decision'),
      rollbackTo: s.prepare('ROLLBACK TO decision'),
      release: s.prepare('RELEASE decision'),
      commit: s.prepare('COMMIT'),
    };
    this.stopListening = onWriteIntent(s, () => {
      if (!this.deciding || this.inSavepoint) return;
      // A transaction this group did not open (one a route opened for itself) commits on its own: left alone.
      if (!this.open && s.inTransaction) return;
      if (!this.open) {
        this.sql.begin.run();
        this.open = true;
      }
      this.sql.savepoint.run();
      this.inSavepoint = true;
    });
  }

  add(call: GroupCall<T>): void {
    this.queue.push(call);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => void this.flush());
    }
  }

  close(): void {
    this.stopListening();
  }

  private async flush(): Promise<void> {
    const group = this.queue.splice(0, MAX_GROUP);
    const answers: T[] = [];
    let committed = false;
    let unpin: (() => void) | undefined;
    try {
      this.deciding = true;
      unpin = this.ports.pinTokens();
      this.ports.hold(true);
      for (const call of group) {
        // Once the group's transaction is open, every decision gets its savepoint before it starts.
        if (this.open) {
          this.sql.savepoint.run();
          this.inSavepoint = true;
        }
        let answer: T;
        try {
          answer = await call.run();
        } catch (error) {
          answer = call.failure(error);
        }
        const failed = call.failed(answer);
        if (this.inSavepoint) {
          if (failed) this.sql.rollbackTo.run();
          this.sql.release.run();
          this.inSavepoint = false;
        }
        if (failed) this.ports.afterRollback();
        answers.push(answer);
      }
      this.deciding = false;
      if (this.open) this.sql.commit.run();
      committed = true;
    } catch (error) {
      console.error('A group of decisions could not be committed; none of them is acknowledged', error);
      if (this.sqlite.inTransaction) this.sqlite.exec('ROLLBACK');
      this.ports.afterRollback();
    } finally {
      this.ports.hold(false);
      unpin?.();
      this.deciding = false;
      this.open = false;
      this.inSavepoint = false;
    }
    group.forEach((call, i) => call.settle(committed ? answers[i] : undefined));
    this.scheduled = false;
    if (this.queue.length > 0) {
      this.scheduled = true;
      setImmediate(() => void this.flush());
    }
  }
}

/** PostgreSQL: each call decided as it comes; its answer leaves after the commit that holds what it decided. */
export class Concurrent<T> implements CallGroups<T> {
  add(call: GroupCall<T>): void {
    call.run().then(
      (answer) => call.settle(answer),
      (error: unknown) => call.settle(call.failure(error)),
    );
  }

  close(): void {}
}
