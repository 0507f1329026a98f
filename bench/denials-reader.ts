/**
 * The concurrent reader of bench/denials.ts, run in a worker thread: it opens the database file read-only and runs
 * the console's "latest denials of one agent" query in a loop until told to stop.
 *
 * control (Int32Array over a SharedArrayBuffer): [0] stop flag, [1] queries run.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

export interface ReaderData {
  path: string;
  agents: readonly string[];
  control: SharedArrayBuffer;
}

export const READER_QUERY =
  'SELECT id, tool_call_id, tool_name, agent_name, arguments_json, rule_source, reason, user_role, http_method, ' +
  'http_path, timestamp, principal FROM permission_denials WHERE agent_name = ? ORDER BY id DESC LIMIT 50';

function run(data: ReaderData): void {
  const control = new Int32Array(data.control);
  const db = new Database(data.path, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 10000');
  const query = db.prepare(READER_QUERY);
  parentPort?.postMessage({ type: 'ready' });
  let rows = 0;
  let i = 0;
  const n = data.agents.length;
  while (Atomics.load(control, 0) === 0) {
    rows += query.all(data.agents[i % n]).length;
    i++;
    Atomics.add(control, 1, 1);
  }
  db.close();
  parentPort?.postMessage({ type: 'done', rows, queries: i });
}

if (parentPort && workerData) run(workerData as ReaderData);
