/**
 * A throwaway PostgreSQL cluster for tests and benchmarks: Debian's initdb and pg_ctl on a folder under the test's own
 * temporary directory, listening on a free loopback port (and a socket in that folder), never a system service.
 *
 * initdb refuses to run as root: when this process is root (CI, containers) the cluster's folder is given to the
 * `postgres` user and the tools run as that user (runuser). The cluster trusts local connections (it listens on
 * 127.0.0.1 only, for the lifetime of one test run, benchmark or e2e spec) and is stopped and removed by stop().
 * Unit tests share one cluster per run (shared-postgres.ts); a file of its own only where stopping it is the point.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where a test's databases are: what a test reads of its cluster, whether the cluster is its own or the run's. */
export interface PgServer {
  /** postgres://swarm@127.0.0.1:PORT/<database>: the cluster's `swarm` database, or a test file's own empty one */
  url: string;
  port: number;
  /** a folder of its own (the cluster's, or the test file's), removed with it */
  dir: string;
  /** a URL for another database of this cluster */
  urlOf(database: string): string;
}

export interface PgCluster extends PgServer {
  createDatabase(name: string): void;
  /** stop the cluster and remove its folder (once; later calls do nothing) */
  stop(): void;
}

/** The newest PostgreSQL of Debian's package (PG_BIN overrides), or undefined when it is not installed. */
export function postgresBin(): string | undefined {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** One of PostgreSQL's tools, as the postgres user when this process is root: the command and its arguments. */
function command(bin: string, tool: string, args: string[]): [string, string[]] {
  return isRoot() ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
}

export function run(bin: string, tool: string, args: string[]): void {
  const [cmd, argv] = command(bin, tool, args);
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${tool} failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout || r.error?.message || '').trim()}`);
}

/** run(), without blocking this process while the tool works. */
function runLater(bin: string, tool: string, args: string[]): Promise<void> {
  const [cmd, argv] = command(bin, tool, args);
  return new Promise((resolve, reject) => {
    execFile(cmd, argv, { encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${tool} failed (${error.code ?? error.signal}): ${(stderr || stdout || error.message).trim()}`)) : resolve(),
    );
  });
}

/** PostgreSQL's tools, or the error that says how to install them. */
export function requirePostgresBin(): string {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed: apt-get install -y postgresql (CI installs it).');
  return bin;
}

/**
 * Stop the cluster whose folder is `dir` if it runs (immediately: nothing in it is kept) and remove the folder. For a
 * cluster whose starter is gone (the run's shared one, stopped by the global teardown) as for one's own.
 */
export function stopCluster(dir: string): void {
  const data = join(dir, 'data');
  try {
    const bin = postgresBin();
    if (bin && existsSync(join(data, 'postmaster.pid'))) run(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * stopCluster() for vitest's own process (the global teardown): it keeps serving its workers while pg_ctl stops the
 * cluster, instead of blocking for the seconds that takes on a loaded machine.
 */
export async function stopClusterLater(dir: string): Promise<void> {
  const data = join(dir, 'data');
  try {
    const bin = postgresBin();
    if (bin && existsSync(join(data, 'postmaster.pid'))) await runLater(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Start a cluster. `durable: false` (tests) turns fsync off: the tests kill servers, not the database, so its own
 * crash safety is not what they measure; benchmarks keep PostgreSQL's defaults. `dir` (an empty folder) instead of a
 * new temporary one: the run's shared cluster lives in the folder the global setup chose.
 */
export async function startPostgres(options: { durable?: boolean; dir?: string; maxConnections?: number } = {}): Promise<PgCluster> {
  const bin = requirePostgresBin();
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'swarm-pg-'));
  const data = join(dir, 'data');
  if (isRoot()) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  // Imported here, not at the top: the global setup (shared-postgres-setup.ts) reads this module in vitest's own
  // process, which must not load the server.
  const { freePort } = await import('@/lib/server/serve');
  const port = await freePort();
  run(bin, 'initdb', ['-D', data, '-U', 'swarm', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
  const settings = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    `-c max_connections=${options.maxConnections ?? 200}`,
    ...(options.durable ? [] : ['-c fsync=off', '-c full_page_writes=off']),
  ].join(' ');
  run(bin, 'pg_ctl', ['-D', data, '-o', settings, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']);
  const urlOf = (database: string) => `postgres://swarm@127.0.0.1:${port}/${database}`;
  let stopped = false;
  const cluster: PgCluster = {
    url: urlOf('swarm'),
    port,
    dir,
    urlOf,
    createDatabase(name) {
      run(bin, 'createdb', ['-h', dir, '-p', String(port), '-U', 'swarm', name]);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      stopCluster(dir);
    },
  };
  cluster.createDatabase('swarm');
  return cluster;
}

