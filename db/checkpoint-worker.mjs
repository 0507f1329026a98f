// The WAL checkpointer: copies committed pages from the write-ahead log into the database file on its own thread and
// connection, so the threads that record denials only ever append to the log. Plain JavaScript, loaded at run time.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

// Never create a database: a worker that starts after its file was removed (a test's temp folder) ends instead.
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
const checkpoint = (mode) => {
  try {
    db.pragma(`wal_checkpoint(${mode})`);
  } catch {
    // Busy or locked: the next tick tries again; the writers' own fallback checkpoint bounds the log meanwhile.
  }
};
const timer = setInterval(() => checkpoint('PASSIVE'), workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  checkpoint('TRUNCATE');
  db.close();
  parentPort.postMessage('stopped');
});
