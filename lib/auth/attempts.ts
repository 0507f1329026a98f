/**
 * Sign-in attempts, in the database, so that every process that signs people in counts the same failures: the Next.js
 * server (the sign-in form and `POST /api/v1/auth/login`), and several servers on one PostgreSQL database. In memory,
 * each process counted its own, and concurrent guesses for one user each read the same count before any of them
 * failed: 30 of them against a throttled user finished in 9.5 s, where one after the other they take minutes.
 *
 * One row per key: `user:<name in lower case>` and, for the address, `ip:<address>`. Per key, the failures in a row
 * (forgotten after 15 quiet minutes, or the lock's period if longer), and on the user's key:
 *
 *   - busy_until: an attempt for this user name is under way (taken in one transaction with the check of the lock):
 *     another attempt for the same name, from any process, is refused until it ends, so attempts for one name are
 *     taken one at a time, each after its delay; a process that dies mid-attempt frees the name after its lease;
 *   - locked_until: a compliance profile's lock (`sign_in` in profile.yaml; PCI DSS 8.3.4) after N failures in a row:
 *     until then, no password is checked for the name.
 *
 * The verdicts are pure functions of the rows (below), the same for SqliteLoginAttempts (here) and PgLoginAttempts
 * (pg-attempts.ts).
 */
import type Database from 'better-sqlite3';
import { announceWrite } from '@/db/write-intent';

/** The first failures cost nothing; then each attempt waits BASE_DELAY_MS, doubling with each failure, up to the cap. */
export const FREE_ATTEMPTS = 3;
export const BASE_DELAY_MS = 250;
export const MAX_DELAY_MS = 8_000;
/** Failures are forgotten after this long without another one (or after the lock's period, when that is longer). */
export const FORGET_AFTER_SECONDS = 15 * 60;
/**
 * How long an attempt holds its user name beyond its delay: checking a password takes a fraction of a second; a process
 * that dies in the middle of an attempt frees the name after this.
 */
export const ATTEMPT_LEASE_SECONDS = 30;
/** Quiet rows are pruned every this many failures. */
export const PRUNE_EVERY = 100;

/** How long to wait before checking the password, after `failures` failures in a row. */
export function delayFor(failures: number): number {
  if (failures < FREE_ATTEMPTS) return 0;
  return Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (failures - FREE_ATTEMPTS));
}

/** A profile's lock: after `afterFailures` failures in a row, for `lockSeconds`. */
export interface LockoutPolicy {
  afterFailures: number;
  lockSeconds: number;
}

/** One key's row. Times in seconds since the epoch. */
export interface AttemptRow {
  failures: number;
  lastFailureAt: number | null;
  lockedUntil: number | null;
  busyUntil: number | null;
}

/** Whether an attempt may go on: with the failures that set its delay; or refused, the name locked or busy. */
export type AttemptStart = { kind: 'go'; failures: number; delayMs: number } | { kind: 'busy' } | { kind: 'locked'; until: number };

/** What a failure left: the user name's failures in a row, and the end of the lock it started (or null). */
export interface AttemptFailure {
  failures: number;
  lockedUntil: number | null;
}

export function forgetSeconds(policy: LockoutPolicy | undefined): number {
  return Math.max(FORGET_AFTER_SECONDS, policy?.lockSeconds ?? 0);
}

/** The failures of a row still counted at `now`. */
function counted(row: AttemptRow | undefined, now: number, forget: number): number {
  return row && row.lastFailureAt !== null && now - row.lastFailureAt < forget ? row.failures : 0;
}

/** May an attempt for the user go on now? (The user's row decides lock and turn; every key's failures the delay.) */
export function judgeStart(user: AttemptRow | undefined, others: readonly (AttemptRow | undefined)[], now: number, policy: LockoutPolicy | undefined): AttemptStart {
  if (user?.lockedUntil != null && user.lockedUntil > now) return { kind: 'locked', until: user.lockedUntil };
  if (user?.busyUntil != null && user.busyUntil > now) return { kind: 'busy' };
  const forget = forgetSeconds(policy);
  const failures = Math.max(counted(user, now, forget), ...others.map((r) => counted(r, now, forget)));
  return { kind: 'go', failures, delayMs: delayFor(failures) };
}

/** The lease an attempt that goes on takes on its user name: its delay, then the time to check the password. */
export function leaseUntil(start: { delayMs: number }, now: number): number {
  return now + start.delayMs / 1000 + ATTEMPT_LEASE_SECONDS;
}

/**
 * A key's row after a failure: one more in a row (from none when the last was forgotten). On the user's key, with a
 * policy, the N-th locks the name for its period, and the count starts again.
 */
export function afterFailure(row: AttemptRow | undefined, now: number, policy: LockoutPolicy | undefined, isUser: boolean): AttemptRow {
  const failures = counted(row, now, forgetSeconds(policy)) + 1;
  const busyUntil = isUser ? null : (row?.busyUntil ?? null);
  if (isUser && policy && failures >= policy.afterFailures) return { failures: 0, lastFailureAt: now, lockedUntil: now + policy.lockSeconds, busyUntil };
  return { failures, lastFailureAt: now, lockedUntil: row?.lockedUntil ?? null, busyUntil };
}

/** The rows that can go: no failure counted, no lock, no attempt under way. */
export function pruneBefore(now: number, policy: LockoutPolicy | undefined): number {
  return now - forgetSeconds(policy);
}

const COLUMNS = 'failures, last_failure_at AS lastFailureAt, locked_until AS lockedUntil, busy_until AS busyUntil';

/** The sign-in attempts on SQLite: each step one IMMEDIATE transaction, so that two processes never both go on. */
export class SqliteLoginAttempts {
  private readonly read;
  private readonly write;
  private readonly remove;
  private readonly free;
  private readonly prune;
  private failuresSeen = 0;

  constructor(private readonly sqlite: Database.Database) {
    this.read = sqlite.prepare<[string], AttemptRow>(`SELECT ${COLUMNS} FROM login_attempts WHERE key = ?`);
    this.write = sqlite.prepare<[string, number, number | null, number | null, number | null]>(
      'INSERT INTO login_attempts (key, failures, last_failure_at, locked_until, busy_until) VALUES (?, ?, ?, ?, ?) ' +
        'ON CONFLICT (key) DO UPDATE SET failures = excluded.failures, last_failure_at = excluded.last_failure_at, locked_until = excluded.locked_until, busy_until = excluded.busy_until',
    );
    this.remove = sqlite.prepare<[string]>('DELETE FROM login_attempts WHERE key = ?');
    this.free = sqlite.prepare<[string]>('UPDATE login_attempts SET busy_until = NULL WHERE key = ?');
    this.prune = sqlite.prepare<[number, number, number]>(
      'DELETE FROM login_attempts WHERE coalesce(last_failure_at, 0) < ? AND coalesce(locked_until, 0) < ? AND coalesce(busy_until, 0) < ?',
    );
  }

  private transaction<T>(body: () => T): T {
    announceWrite(this.sqlite);
    return this.sqlite.inTransaction ? body() : this.sqlite.transaction(body).immediate();
  }

  private put(key: string, r: AttemptRow): void {
    this.write.run(key, r.failures, r.lastFailureAt, r.lockedUntil, r.busyUntil);
  }

  /** Check the lock and the turn of the user name and, when the attempt may go on, take the name for it. */
  start(userKey: string, otherKeys: readonly string[], now: number, policy?: LockoutPolicy): AttemptStart {
    return this.transaction(() => {
      const user = this.read.get(userKey);
      const verdict = judgeStart(user, otherKeys.map((k) => this.read.get(k)), now, policy);
      if (verdict.kind === 'go') this.put(userKey, { failures: user?.failures ?? 0, lastFailureAt: user?.lastFailureAt ?? null, lockedUntil: user?.lockedUntil ?? null, busyUntil: leaseUntil(verdict, now) });
      return verdict;
    });
  }

  /** A failed attempt: counted on every key, the name locked when the policy says so, and freed for the next attempt. */
  failed(userKey: string, otherKeys: readonly string[], now: number, policy?: LockoutPolicy): AttemptFailure {
    const out = this.transaction(() => {
      for (const key of otherKeys) this.put(key, afterFailure(this.read.get(key), now, policy, false));
      const user = afterFailure(this.read.get(userKey), now, policy, true);
      this.put(userKey, user);
      return { failures: user.failures, lockedUntil: user.lockedUntil !== null && user.lockedUntil > now ? user.lockedUntil : null };
    });
    if (++this.failuresSeen % PRUNE_EVERY === 0) this.prune.run(pruneBefore(now, policy), now, now);
    return out;
  }

  /** A successful attempt: the user name's failures are forgotten (the address keeps its own). */
  succeeded(userKey: string): void {
    announceWrite(this.sqlite);
    this.remove.run(userKey);
  }

  /** The attempt ended without an outcome (the server failed under it): the name is free again. */
  release(userKey: string): void {
    announceWrite(this.sqlite);
    this.free.run(userKey);
  }

  /** An administrator lifts a lock (and forgets the failures); false when the name was not locked. */
  unlock(userKey: string, now: number): boolean {
    return this.transaction(() => {
      const row = this.read.get(userKey);
      const locked = row?.lockedUntil != null && row.lockedUntil > now;
      if (row) this.remove.run(userKey);
      return locked;
    });
  }

  /** The row of a key (tests, the CLI). */
  get(key: string): AttemptRow | undefined {
    return this.read.get(key);
  }
}
