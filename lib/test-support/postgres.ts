/**
 * A throwaway PostgreSQL cluster for tests and benchmarks: Debian's initdb and pg_ctl on a folder under the test's own
 * temporary directory, listening on a free loopback port (and a socket in that folder), never a system service.
 *
 * initdb refuses to run as root: when this process is root (CI, containers) the cluster's folder is given to the
 * `postgres` user and the tools run as that user (runuser). The cluster trusts local connections (it listens on
 * 127.0.0.1 only, for the lifetime of one test file) and is stopped and removed by stop().
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@/lib/server/serve';

export interface PgCluster {
  /** postgres://swarm@127.0.0.1:PORT/swarm */
  url: string;
  port: number;
  dir: string;
  /** a URL for another database of this cluster (created by createDatabase) */
  urlOf(database: string): string;
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

function run(bin: string, tool: string, args: string[]): void {
  const [cmd, argv] = isRoot() ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${tool} failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout || r.error?.message || '').trim()}`);
}

/**
 * Start a cluster. `durable: false` (tests) turns fsync off: the tests kill servers, not the database, so its own
 * crash safety is not what they measure; benchmarks keep PostgreSQL's defaults.
 */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<PgCluster> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed: apt-get install -y postgresql (CI installs it).');
  const dir = mkdtempSync(join(tmpdir(), 'swarm-pg-'));
  const data = join(dir, 'data');
  if (isRoot()) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const port = await freePort();
  run(bin, 'initdb', ['-D', data, '-U', 'swarm', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
  const settings = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    '-c max_connections=200',
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
      try {
        run(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  cluster.createDatabase('swarm');
  return cluster;
}

