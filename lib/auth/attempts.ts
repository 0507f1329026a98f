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
 * The verdicts are pure functions of the rows (below); one store (SqlLoginAttempts) keeps the rows on either database
 * over the dialect port, each step one transaction serialised on the user name (`serialise`: PostgreSQL's advisory
 * lock, SQLite's writer lock), so that two processes never both go on and each counts what the one before committed.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { SqlDatabase, TxRunner, TxSteps } from '@/db/dialect';
import type { loginAttempts } from '@/db/schema';

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

/** One key's row (login_attempts without its key). Times in seconds since the epoch. */
export type AttemptRow = Omit<typeof loginAttempts.$inferSelect, 'key'>;

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

const COLUMNS = sql`failures, last_failure_at AS "lastFailureAt", locked_until AS "lockedUntil", busy_until AS "busyUntil"`;

/** Failed sign-ins, locks and the attempt under way per user name, shared by every process on the database. */
export interface LoginAttempts {
  /** Check the lock and the turn of the user name and, when the attempt may go on, take the name for it. */
  start(userKey: string, otherKeys: readonly string[], now: number, policy?: LockoutPolicy): Promise<AttemptStart>;
  /** A failed attempt: counted on every key, the name locked when the policy says so, and freed for the next attempt. */
  failed(userKey: string, otherKeys: readonly string[], now: number, policy?: LockoutPolicy): Promise<AttemptFailure>;
  /** A successful attempt: the user name's failures are forgotten (the address keeps its own). */
  succeeded(userKey: string): Promise<void>;
  /** The attempt ended without an outcome (the server failed under it): the name is free again. */
  release(userKey: string): Promise<void>;
  /** An administrator lifts a lock (and forgets the failures); false when the name was not locked. */
  unlock(userKey: string, now: number): Promise<boolean>;
  /** The row of a key (tests, the CLI). */
  get(key: string): Promise<AttemptRow | undefined>;
}

/** A key's row; `lock`: the dialect's FOR UPDATE, to hold it until the transaction ends. */
function* read(tx: TxRunner, key: string, lock: SQL = sql``): TxSteps<AttemptRow | undefined> {
  return yield* tx.one<AttemptRow>(sql`SELECT ${COLUMNS} FROM login_attempts WHERE key = ${key}${lock}`);
}

function* put(tx: TxRunner, key: string, r: AttemptRow): TxSteps<void> {
  yield* tx.run(sql`
    INSERT INTO login_attempts (key, failures, last_failure_at, locked_until, busy_until) VALUES (${key}, ${r.failures}, ${r.lastFailureAt}, ${r.lockedUntil}, ${r.busyUntil})
    ON CONFLICT (key) DO UPDATE SET failures = excluded.failures, last_failure_at = excluded.last_failure_at, locked_until = excluded.locked_until, busy_until = excluded.busy_until`);
}

export class SqlLoginAttempts implements LoginAttempts {
  private failuresSeen = 0;

  constructor(private readonly db: SqlDatabase) {}

  /** Steps for one user name, on any process, one after the other. */
  private turn<T>(userKey: string, body: (tx: TxRunner) => TxSteps<T>): Promise<T> {
    return this.db.transaction(body, { serialise: `sign-in:${userKey}` });
  }

  start(userKey: string, otherKeys: readonly string[], now: number, policy?: LockoutPolicy): Promise<AttemptStart> {
    return this.turn(userKey, function* (tx) {
      const user = yield* read(tx, userKey);
      const others: (AttemptRow | undefined)[] = [];
      for (const key of otherKeys) others.push(yield* read(tx, key));
      const verdict = judgeStart(user, others, now, policy);
      if (verdict.kind === 'go') {
        yield* tx.run(sql`
          INSERT INTO login_attempts (key, busy_until) VALUES (${userKey}, ${leaseUntil(verdict, now)})
          ON CONFLICT (key) DO UPDATE SET busy_until = excluded.busy_until`);
      }
      return verdict;
    });
  }

  async failed(userKey: string, otherKeys: readonly string[], now: number, policy?: LockoutPolicy): Promise<AttemptFailure> {
    const forUpdate = this.db.forUpdate;
    const out = await this.turn(userKey, function* (tx) {
      // An address is counted by the attempts of every user name: its row is locked (made first when missing) so that
      // two names failing at once from one address both count (in one order, so that they never wait for each other).
      for (const key of [...otherKeys].sort()) {
        yield* tx.run(sql`INSERT INTO login_attempts (key) VALUES (${key}) ON CONFLICT (key) DO NOTHING`);
        yield* put(tx, key, afterFailure(yield* read(tx, key, forUpdate), now, policy, false));
      }
      const user = afterFailure(yield* read(tx, userKey), now, policy, true);
      yield* put(tx, userKey, user);
      return { failures: user.failures, lockedUntil: user.lockedUntil !== null && user.lockedUntil > now ? user.lockedUntil : null };
    });
    if (++this.failuresSeen % PRUNE_EVERY === 0) {
      // The rows that can go: no failure counted, no lock, no attempt under way.
      await this.db
        .run(
          sql`DELETE FROM login_attempts WHERE coalesce(last_failure_at, 0) < ${now - forgetSeconds(policy)} AND coalesce(locked_until, 0) < ${now} AND coalesce(busy_until, 0) < ${now}`,
        )
        .catch((error: unknown) => console.error('Pruning old sign-in attempts failed.', error));
    }
    return out;
  }

  async succeeded(userKey: string): Promise<void> {
    await this.db.run(sql`DELETE FROM login_attempts WHERE key = ${userKey}`);
  }

  async release(userKey: string): Promise<void> {
    await this.db.run(sql`UPDATE login_attempts SET busy_until = NULL WHERE key = ${userKey}`);
  }

  async unlock(userKey: string, now: number): Promise<boolean> {
    const row = await this.db.one<{ lockedUntil: number | null }>(sql`DELETE FROM login_attempts WHERE key = ${userKey} RETURNING locked_until AS "lockedUntil"`);
    return row?.lockedUntil != null && row.lockedUntil > now;
  }

  get(key: string): Promise<AttemptRow | undefined> {
    return this.db.one<AttemptRow>(sql`SELECT ${COLUMNS} FROM login_attempts WHERE key = ${key}`);
  }
}
