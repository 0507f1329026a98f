/**
 * Structured logs: one JSON object per line on stdout (errors on stderr), with a level from SWARM_LOG_LEVEL
 * (error, warn, info, debug; default info). Every API request is one `request` line: method, route, status, duration
 * and the decision id when there is one, from the Next.js route wrapper and from the decision listener alike.
 */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

const ORDER: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

/** The level in force (read on every call: tests and operators may change it at run time). */
export function logLevel(env: Readonly<Record<string, string | undefined>> = process.env): LogLevel {
  const v = env.SWARM_LOG_LEVEL?.trim().toLowerCase();
  return v && v in ORDER ? (v as LogLevel) : 'info';
}

/**
 * The level in force, read from SWARM_LOG_LEVEL once (a read of process.env is a call into the runtime: two per
 * request line were a visible part of the decision listener's time). A test that changes the variable calls
 * refreshLogLevel().
 */
let inForce = ORDER[logLevel()];

export function refreshLogLevel(): void {
  inForce = ORDER[logLevel()];
}

export function logEnabled(level: LogLevel): boolean {
  return ORDER[level] <= inForce;
}

/** Where lines go (tests capture them). */
export type LogSink = (line: string, level: LogLevel) => void;
/**
 * The default sink buffers lines and writes them together: request lines (stdout) at most FLUSH_MS after the first
 * of them, or at once when FLUSH_LINES are waiting; error lines (stderr) at the end of the turn of the event loop. A
 * write to a pipe or a file is a system call: one per request line cost the decision listener a fifth of its
 * throughput. Written once per turn, at info, the lines still cost an allowed call about a tenth of its CPU (two
 * listeners side by side, info against warn); this batching and the cheaper line below took about 10% off. Whatever
 * is left is written when the process exits; a process killed with SIGKILL loses at most FLUSH_MS of request lines
 * (never an audit row: those are in the database before any answer).
 */
const FLUSH_MS = 50;
const FLUSH_LINES = 512;
const pending: { out: string[]; err: string[] } = { out: [], err: [] };
let outTimer: NodeJS.Timeout | undefined;
let errScheduled = false;
function flushOut(): void {
  if (outTimer) clearTimeout(outTimer);
  outTimer = undefined;
  if (pending.out.length > 0) process.stdout.write(`${pending.out.splice(0).join('\n')}\n`);
}
function flushErr(): void {
  errScheduled = false;
  if (pending.err.length > 0) process.stderr.write(`${pending.err.splice(0).join('\n')}\n`);
}
function flushLogs(): void {
  flushOut();
  flushErr();
}
process.once('exit', flushLogs);
const defaultSink: LogSink = (line, level) => {
  if (level === 'error') {
    pending.err.push(line);
    if (!errScheduled) {
      errScheduled = true;
      setImmediate(flushErr);
    }
    return;
  }
  if (pending.out.push(line) >= FLUSH_LINES) flushOut();
  else if (!outTimer) outTimer = setTimeout(flushOut, FLUSH_MS).unref();
};
let sink: LogSink = defaultSink;

/** Replace the sink (tests); returns a function that restores the previous one. */
export function setLogSink(next: LogSink): () => void {
  const before = sink;
  sink = next;
  return () => {
    sink = before;
  };
}

let role: 'listener' | 'next' | undefined;

/** The process that wrote a line: the decision listener or the Next.js server (kept once SWARM_PROCESS says it). */
export function processRole(): 'listener' | 'next' {
  if (role) return role;
  const said = process.env.SWARM_PROCESS;
  if (said === undefined) return 'next';
  return (role = said === 'listener' ? 'listener' : 'next');
}

export function log(level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void {
  if (!logEnabled(level)) return;
  sink(JSON.stringify({ time: isoNow(), level, msg, process: processRole(), ...fields }), level);
}

/** A JSON string: as it is when nothing in it needs escaping (ids, routes, names), else JSON.stringify's. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const str = (s: string): string => (PLAIN.test(s) ? `"${s}"` : JSON.stringify(s));

/** The time of a line, its ISO string made once per millisecond (toISOString was a quarter of a request line's cost). */
let isoAt = -1;
let iso = '';
function isoNow(): string {
  const now = Date.now();
  if (now !== isoAt) {
    isoAt = now;
    iso = new Date(now).toISOString();
  }
  return iso;
}

export interface RequestLog {
  method: string;
  route: string;
  status: number;
  durationMs: number;
  decisionId?: string | null;
  principal?: string;
  /** the client's address (lib/http/client-address.ts), when known */
  ip?: string;
}

/** One line per API request: error for 5xx, warn for 4xx, info otherwise. */
export function logRequest(r: RequestLog): void {
  const level: LogLevel = r.status >= 500 ? 'error' : r.status >= 400 ? 'warn' : 'info';
  if (!logEnabled(level)) return;
  // The line every API request writes, built directly (the same JSON as log() builds, without the object it spreads).
  sink(
    `{"time":"${isoNow()}","level":"${level}","msg":"request","process":"${processRole()}","method":${str(r.method)},` +
      `"route":${str(r.route)},"status":${r.status},"duration_ms":${Math.round(r.durationMs * 1000) / 1000}` +
      `${r.decisionId ? `,"decision_id":${str(r.decisionId)}` : ''}${r.principal ? `,"principal":${str(r.principal)}` : ''}${r.ip ? `,"ip":${str(r.ip)}` : ''}}`,
    level,
  );
}
