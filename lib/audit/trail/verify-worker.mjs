// One run of a chain's rows verified on its own thread and read-only connection (verify-parallel.ts splits a long chain
// into runs, one per core, and stitches them together). Plain JavaScript, loaded at run time like the WAL checkpointer.
// It answers a summary of the run: clean (`ok`: every row chained, ids dense, each row following the one before, every
// hash recomputed and equal), or not, in which case the caller verifies the whole chain row by row in one snapshot and
// reports what that finds. So this file never has to say what is wrong, only that something is.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { chainHash, encodeRow } from './chain-encoding.mjs';

const { path, sql, fromId, toId, at, wanted, range } = workerData;
const want = new Set(wanted);
const summary = {
  ok: true,
  rows: 0,
  firstId: null,
  firstPrev: null,
  lastId: null,
  lastHash: null,
  firstTimestamp: null,
  lastTimestamp: null,
  inRange: { rows: 0, firstId: null, lastId: null },
  hashAt: [],
};
const db = new Database(path, { readonly: true, fileMustExist: true });
try {
  let expectedId = fromId;
  let expectedPrev = null;
  for (const row of db.prepare(sql).raw(true).iterate(fromId, toId)) {
    const id = row[0];
    const prev = row[at.prev];
    const stored = row[at.hash];
    const timestamp = row[at.timestamp];
    if (id !== expectedId || stored === null || prev === null || (expectedPrev !== null && prev !== expectedPrev) || chainHash(prev, id, encodeRow(row, 1, at.prev)) !== stored) {
      summary.ok = false;
      break;
    }
    if (summary.firstId === null) {
      summary.firstId = id;
      summary.firstPrev = prev;
    }
    // As the row-by-row verifier counts them: the first timestamp that is there, and the last row's.
    summary.firstTimestamp ??= timestamp;
    summary.lastId = id;
    summary.lastHash = stored;
    summary.lastTimestamp = timestamp;
    summary.rows++;
    if (want.has(id)) summary.hashAt.push([id, stored]);
    if ((range.from === undefined || timestamp >= range.from) && (range.to === undefined || timestamp <= range.to)) {
      summary.inRange.rows++;
      summary.inRange.firstId ??= id;
      summary.inRange.lastId = id;
    }
    expectedPrev = stored;
    expectedId = id + 1;
  }
  if (expectedId !== toId + 1) summary.ok = false;
} catch (error) {
  summary.ok = false;
  summary.error = String(error?.message ?? error);
} finally {
  db.close();
}
parentPort.postMessage(summary);
