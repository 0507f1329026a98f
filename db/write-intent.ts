/**
 * Write intent: a connection's writers say "I am about to write" first, so that whoever holds the connection can open
 * its transaction only when there is something to write. The decision listener's group commit (lib/decisions/group-commit.ts)
 * takes SQLite's write lock at the first write of a group instead of before every group: a group of allowed calls
 * never locks the database, so several listener processes decide side by side instead of waiting for each other.
 *
 * A writer that does not announce itself is still correct (its statement commits on its own); it only misses the
 * group's shared commit.
 */
import type Database from 'better-sqlite3';

const listeners = new WeakMap<Database.Database, Set<() => void>>();

/** Call `listener` before each announced write on this connection, until the returned function is called. */
export function onWriteIntent(sqlite: Database.Database, listener: () => void): () => void {
  let set = listeners.get(sqlite);
  if (!set) listeners.set(sqlite, (set = new Set()));
  set.add(listener);
  return () => void set.delete(listener);
}

/** About to write on this connection: its listeners (if any) open the transaction the write belongs to. */
export function announceWrite(sqlite: Database.Database): void {
  const set = listeners.get(sqlite);
  if (set) for (const listener of set) listener();
}
