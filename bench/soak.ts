/**
 * Memory under a spray of unique agent names (issue 23, "Bounded memory"): the product's server as `npm start` runs it
 * (scripts/start.ts: the decision listener workers and Next.js, a fresh SQLite database in a temporary folder, the
 * repository's config), and autocannon sending `POST /api/v1/permissions/check` with a new agent name on every call
 * (and a new tool name on every fourth) for SOAK_MINUTES. Every call is a denial (`agent_allowlist`: the agent is
 * unknown) written to the audit trail before its answer; every name is one the server has never seen, so any memo keyed
 * by names that is not bounded grows with every call.
 *
 * Every SOAK_SAMPLE_SECONDS the resident memory (VmRSS of /proc/<pid>/status) of every process of the server is read:
 * the process `npm start` runs, its listener workers and the Next.js server, found as the descendants of the first.
 * Printed: the curve (time, total RSS, RSS by process, denials so far, rate, errors, load average). Judged: "flat after
 * warm-up" when, after the first fifth of the run (at least a minute) is left out as warm-up,
 *   - the slope of a least-squares line through the total RSS of the second half of the run is at most
 *     SOAK_MAX_SLOPE_MB_PER_MIN (default 2 MB a minute: about 20 bytes a denial at 1,600 denials/s), and
 *   - the median of the last minute is within SOAK_MAX_GROWTH_PERCENT (default 10%) of the median of the first minute
 *     after warm-up, and no sample after warm-up is more than SOAK_MAX_PEAK_PERCENT (default 20%) above it (memos that
 *     are cleared whole at a large cap make a saw that the slope and the last minute can miss).
 * Run alone it exits 1 when the curve is not flat, or when any call was not answered with a denial.
 *
 *   node --import tsx bench/soak.ts                  30 minutes (the issue's soak)
 *   SOAK_MINUTES=10 node --import tsx bench/soak.ts  shorter
 *
 * `npm run bench` runs it for 10 minutes unless SOAK_MINUTES says otherwise (bench/README.md says why). Alone, the soak
 * also writes its section of bench/RESULTS.md (the rest of that file is left as it is).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createApp } from '@/lib/app';
import { freePort } from '@/lib/server/serve';
import { listenerWorkers } from '@/lib/server/workers';
import { ensureBuild, ROOT, spawnLogged, stop, waitUp } from './http';
import { fmt, fmtInt, isMain, markdownTable } from './util';

const HOST = '127.0.0.1';
const ADMIN_TOKEN = 'bench-soak-admin-token-0123456789abcdef';
const CHECK_PATH = '/api/v1/permissions/check';

/** The issue's soak: 30 minutes. */
export const SOAK_DEFAULT_MINUTES = 30;
/** What `npm run bench` runs unless SOAK_MINUTES says otherwise (bench/README.md). */
export const SOAK_BENCH_MINUTES = 10;

export type ProcessRole = 'primary' | 'listener' | 'next' | 'other';
const ROLES: readonly ProcessRole[] = ['primary', 'listener', 'next', 'other'];

export interface SoakSample {
  /** seconds since the load started (0: before it, the idle server) */
  t: number;
  /** total VmRSS of the server's processes, MB (10^6 bytes) */
  rssMb: number;
  byRole: Record<ProcessRole, number>;
  processes: number;
  /** calls answered with a denial so far */
  denials: number;
  /** denials per second since the sample before */
  rate: number;
  /** calls not answered with a denial so far (socket errors, timeouts, another status or decision) */
  errors: number;
  load1: number;
}

export interface SoakVerdict {
  warmUpSec: number;
  /** median total RSS of the first minute after warm-up */
  warmLevelMb: number;
  /** median total RSS of the last minute */
  endLevelMb: number;
  growth: number;
  /** the highest total RSS after warm-up, against the level of the first minute after it */
  peakAfterWarmUpMb: number;
  peakGrowth: number;
  /** least-squares slope of the total RSS over the second half of the run */
  slopeMbPerMin: number;
  /** the same slope per denial of that half (bytes) */
  bytesPerDenial: number;
  maxSlopeMbPerMin: number;
  maxGrowth: number;
  maxPeakGrowth: number;
  flat: boolean;
}

export interface SoakResult {
  minutes: number;
  sampleSec: number;
  connections: number;
  workers: number;
  samples: SoakSample[];
  verdict: SoakVerdict;
  startRssMb: number;
  peak: SoakSample;
  end: SoakSample;
  denials: number;
  errors: number;
  meanRate: number;
  serverStartMs: number;
  loadAtStart: string;
  loadAtEnd: string;
  /** what else the machine ran in the first and the second half of the run (it is shared): the others' CPU, the busiest */
  neighbours: string[];
  /** the database's files at the end (the trail keeps every denial: disk, unlike memory, grows with the calls) */
  diskMb: number;
}

export interface SoakOptions {
  minutes?: number;
  sampleSec?: number;
  connections?: number;
  maxSlopeMbPerMin?: number;
  maxGrowthPercent?: number;
  maxPeakPercent?: number;
  log?: (line: string) => void;
}

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, not "${raw}".`);
  return n;
}

/** The options from the environment (SOAK_MINUTES and the rest), over the caller's defaults. */
export function soakOptionsFromEnv(defaults: SoakOptions = {}): SoakOptions {
  return {
    ...defaults,
    minutes: envNumber('SOAK_MINUTES', defaults.minutes ?? SOAK_DEFAULT_MINUTES),
    sampleSec: envNumber('SOAK_SAMPLE_SECONDS', defaults.sampleSec ?? 5),
    connections: envNumber('SOAK_CONNECTIONS', defaults.connections ?? 10),
    maxSlopeMbPerMin: envNumber('SOAK_MAX_SLOPE_MB_PER_MIN', defaults.maxSlopeMbPerMin ?? 2),
    maxGrowthPercent: envNumber('SOAK_MAX_GROWTH_PERCENT', defaults.maxGrowthPercent ?? 10),
    maxPeakPercent: envNumber('SOAK_MAX_PEAK_PERCENT', defaults.maxPeakPercent ?? 20),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The processes of the server and their memory (Linux /proc)
// ---------------------------------------------------------------------------------------------------------------

/** The parent of every process, from /proc/<pid>/stat (the field after the command name, which may hold spaces). */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(name), Number(fields[1]));
    } catch {
      // gone between the listing and the read
    }
  }
  return out;
}

/** A process and all its descendants. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of parents()) {
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/** VmRSS of a process in kB, or undefined when it is gone. */
export function rssKb(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

function roleOf(pid: number, root: number): ProcessRole {
  if (pid === root) return 'primary';
  let cmd = '';
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return 'other';
  }
  if (cmd.includes('listener-worker')) return 'listener';
  if (/\bnext\b/.test(cmd)) return 'next';
  return 'other';
}

/** The resident memory of the server's processes now. */
function measure(root: number): { rssMb: number; byRole: Record<ProcessRole, number>; processes: number } {
  const byRole: Record<ProcessRole, number> = { primary: 0, listener: 0, next: 0, other: 0 };
  let total = 0;
  let processes = 0;
  for (const pid of processTree(root)) {
    const kb = rssKb(pid);
    if (kb === undefined) continue;
    const mb = (kb * 1024) / 1e6;
    byRole[roleOf(pid, root)] += mb;
    total += mb;
    processes++;
  }
  return { rssMb: total, byRole, processes };
}

/** CPU time of a process so far (user + system), in clock ticks, or undefined when it is gone. */
function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return undefined;
  }
}

/** Busy CPU ticks of the whole machine so far (every core), from /proc/stat. */
function machineBusyTicks(): number {
  const [, user, nice, system, , , irq, softirq, steal] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).map(Number);
  return (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
}

/** A process's command, short: the program's name and its first argument. */
function shortCommand(pid: number): string {
  try {
    const [program = '', first = ''] = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const name = program.split('/').pop() ?? program;
    return `${name} ${first.split('/').slice(-2).join('/')}`.trim().slice(0, 60);
  } catch {
    return '';
  }
}

/**
 * What else the machine was doing (it is shared): read at every sample, the CPU the other processes used (the
 * machine's busy time less the server's and this process's, so that processes that came and went count too), and the
 * commands of those that used the most.
 */
export class Neighbours {
  private ticks = new Map<number, number>();
  private busy = machineBusyTicks();
  private own = process.cpuUsage();
  private at = Date.now();
  private otherTicks = 0;
  private byCommand = new Map<string, number>();

  /** Take a reading; `server`: the server's processes now. */
  sample(server: readonly number[]): void {
    const mine = new Set(server);
    const now = new Map<number, number>();
    let serverTicks = 0;
    for (const pid of parents().keys()) {
      const t = cpuTicks(pid);
      if (t === undefined) continue;
      now.set(pid, t);
      const used = t - (this.ticks.get(pid) ?? t);
      if (mine.has(pid)) serverTicks += used;
      else if (pid !== process.pid && used >= 10) {
        const cmd = shortCommand(pid);
        if (cmd) this.byCommand.set(cmd, (this.byCommand.get(cmd) ?? 0) + used);
      }
    }
    const busy = machineBusyTicks();
    const own = process.cpuUsage();
    const ownTicks = (own.user - this.own.user + own.system - this.own.system) / 10_000;
    this.otherTicks += Math.max(0, busy - this.busy - serverTicks - ownTicks);
    this.ticks = now;
    this.busy = busy;
    this.own = own;
  }

  /** Since the last report: the others' share of the machine and their busiest commands; starts the next period. */
  report(): string {
    const seconds = (Date.now() - this.at) / 1000;
    const cores = os.cpus().length;
    const share = this.otherTicks / 100 / (seconds * cores);
    const top = [...this.byCommand]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([cmd, t]) => `${cmd} ${fmt(t / 100, 2)} s`);
    this.at = Date.now();
    this.otherTicks = 0;
    this.byCommand = new Map();
    return `${Math.round(100 * share)}% of the ${cores} cores${top.length ? ` (${top.join(', ')})` : ''}`;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The verdict
// ---------------------------------------------------------------------------------------------------------------

function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The slope of the least-squares line through (x, y). */
function slope(points: readonly [number, number][]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  return sxx === 0 ? Number.NaN : sxy / sxx;
}

/** "Flat after warm-up", as the header says, for samples of a run of `durationSec`. */
export function judge(samples: readonly SoakSample[], durationSec: number, maxSlopeMbPerMin: number, maxGrowth: number, maxPeakGrowth: number): SoakVerdict {
  const loaded = samples.filter((s) => s.t > 0);
  const warmUpSec = Math.max(60, durationSec / 5);
  const warm = loaded.filter((s) => s.t >= warmUpSec && s.t < warmUpSec + 60).map((s) => s.rssMb);
  const last = loaded.filter((s) => s.t > durationSec - 60).map((s) => s.rssMb);
  const half = loaded.filter((s) => s.t >= durationSec / 2);
  const slopeMbPerSec = slope(half.map((s) => [s.t, s.rssMb]));
  const first = half[0];
  const final = half[half.length - 1];
  const denialsInHalf = first && final ? final.denials - first.denials : 0;
  const spanSec = first && final ? final.t - first.t : 0;
  const warmLevelMb = median(warm);
  const endLevelMb = median(last);
  const growth = endLevelMb / warmLevelMb - 1;
  const peakAfterWarmUpMb = Math.max(...loaded.filter((s) => s.t >= warmUpSec).map((s) => s.rssMb));
  const peakGrowth = peakAfterWarmUpMb / warmLevelMb - 1;
  const slopeMbPerMin = slopeMbPerSec * 60;
  const flat =
    Number.isFinite(slopeMbPerMin) && Number.isFinite(growth) && Number.isFinite(peakGrowth) && slopeMbPerMin <= maxSlopeMbPerMin && growth <= maxGrowth && peakGrowth <= maxPeakGrowth;
  return {
    warmUpSec,
    warmLevelMb,
    endLevelMb,
    growth,
    peakAfterWarmUpMb,
    peakGrowth,
    slopeMbPerMin,
    bytesPerDenial: denialsInHalf > 0 ? (slopeMbPerSec * spanSec * 1e6) / denialsInHalf : Number.NaN,
    maxSlopeMbPerMin,
    maxGrowth,
    maxPeakGrowth,
    flat,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------------------------

export async function runSoakBench(options: SoakOptions = {}): Promise<SoakResult> {
  const log = options.log ?? (() => undefined);
  const minutes = options.minutes ?? SOAK_DEFAULT_MINUTES;
  const sampleSec = options.sampleSec ?? 5;
  const connections = options.connections ?? 10;
  const durationSec = Math.round(minutes * 60);
  // a minute of warm-up, a minute after it to compare with, and a second half to fit a line to
  if (durationSec < 180) throw new Error(`The soak needs at least 3 minutes to judge its curve, not ${minutes}.`);
  const dir = mkdtempSync(join(process.env.BENCH_TMPDIR ?? tmpdir(), 'swarm-bench-soak-'));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    PORT: String(port),
    SWARM_NEXT_PORT: String(await freePort()),
    SWARM_DB: join(dir, 'swarm.db'),
    SWARM_CONFIG_DIR: 'config',
    SWARM_PROFILE: '',
    SWARM_ADMIN_TOKEN: ADMIN_TOKEN,
    SWARM_ADMIN_PASSWORD: 'bench-soak-admin-password',
    // A throwaway benchmark database: its signing key may sit beside it (a real server refuses that).
    SWARM_AUDIT_KEY_BESIDE_DB: '1',
  };
  const loadAtStart = os.loadavg().map((l) => l.toFixed(2)).join(' / ');
  let server: ReturnType<typeof spawnLogged> | undefined;
  try {
    ensureBuild(env, log);
    // The database and the admin token before the server starts (as the HTTP benchmark does).
    const app = createApp({ dbPath: env.SWARM_DB!, configDir: join(ROOT, 'config'), env });
    try {
      await app.bootstrap();
    } finally {
      app.close();
    }
    const url = `http://${HOST}:${port}`;
    const s0 = performance.now();
    server = spawnLogged(['--import', 'tsx', 'scripts/start.ts'], env);
    await waitUp(url, server.child, server.output);
    const serverStartMs = performance.now() - s0;
    const root = server.child.pid!;
    const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    // The first call is answered as every other must be: a denial of an unknown agent.
    const probe = await fetch(`${url}${CHECK_PATH}`, { method: 'POST', headers, body: JSON.stringify({ agent: 'soak-probe', tool: 'profile_dataset' }) });
    const probeJson = (await probe.json()) as { decision?: string; rule_source?: string };
    if (probe.status !== 200 || probeJson.decision !== 'DENY' || probeJson.rule_source !== 'agent_allowlist') {
      throw new Error(`soak: the probe was answered ${probe.status} ${JSON.stringify(probeJson)}, not a DENY by agent_allowlist`);
    }
    // Let the server settle after its start (Next.js warms up, the first checkpoint) before the idle sample.
    await new Promise((r) => setTimeout(r, 3_000));
    const idle = measure(root);
    const samples: SoakSample[] = [{ t: 0, ...idle, denials: 0, rate: 0, errors: 0, load1: os.loadavg()[0]! }];
    log(`soak: server up on ${url} in ${serverStartMs.toFixed(0)} ms, ${idle.processes} processes, ${fmt(idle.rssMb)} MB idle; spraying for ${minutes} min`);
    const others = new Neighbours();
    others.sample(processTree(root));
    others.report();
    const seen: string[] = [];

    // A new agent name on every call, a new tool name on every fourth; the rest of the body as an agent sends it.
    const run = Date.now().toString(36);
    const tools = ['profile_dataset', 'train_model', 'deploy_serving', 'export_raw_data', 'send_email'];
    let n = 0;
    let denials = 0;
    let wrong = 0;
    let socketErrors = 0;
    const body = (): string => {
      const i = n++;
      const tool = i % 4 === 3 ? `soak_tool_${run}_${i}` : tools[i % tools.length]!;
      return JSON.stringify({ agent: `soak-agent-${run}-${i}`, tool, arguments: { dataset_id: `ds_${i % 100}`, env: 'prod' }, tool_call_id: `soak-${i}` });
    };
    let finish!: (r: autocannon.Result) => void;
    let fail!: (e: unknown) => void;
    const done = new Promise<autocannon.Result>((resolve, reject) => ((finish = resolve), (fail = reject)));
    const instance = autocannon(
      {
        url,
        connections,
        duration: durationSec,
        timeout: 10,
        requests: [
          {
            method: 'POST',
            path: CHECK_PATH,
            headers,
            setupRequest: (req) => ({ ...req, body: body() }),
            onResponse: (status, text) => {
              if (status === 200 && text.includes('"decision":"DENY"')) denials++;
              else wrong++;
            },
          },
        ],
      },
      (error, result) => (error ? fail(error) : finish(result)),
    );
    instance.on('reqError', () => socketErrors++);
    const started = Date.now();
    let previous = samples[0]!;
    const sampler = setInterval(() => {
      const t = (Date.now() - started) / 1000;
      const m = measure(root);
      others.sample(processTree(root));
      const sample: SoakSample = { t, ...m, denials, rate: (denials - previous.denials) / (t - previous.t), errors: wrong + socketErrors, load1: os.loadavg()[0]! };
      samples.push(sample);
      previous = sample;
      if (seen.length === 0 && t >= durationSec / 2) seen.push(others.report());
      if (samples.length % Math.max(1, Math.round(60 / sampleSec)) === 1) {
        log(`soak: ${fmt(t / 60)} min: ${fmt(m.rssMb)} MB (${ROLES.filter((r) => m.byRole[r] > 0).map((r) => `${r} ${fmt(m.byRole[r])}`).join(', ')}), ${fmtInt(denials)} denials, ${fmtInt(sample.rate)}/s, ${sample.errors} errors`);
      }
    }, sampleSec * 1000);
    const result = await done.finally(() => clearInterval(sampler));
    const endAt = (Date.now() - started) / 1000;
    const last = measure(root);
    samples.push({ t: endAt, ...last, denials, rate: (denials - previous.denials) / Math.max(0.001, endAt - previous.t), errors: wrong + socketErrors, load1: os.loadavg()[0]! });
    others.sample(processTree(root));
    seen.push(others.report());
    // autocannon's errors count socket errors and timeouts (each also a reqError above)
    const errors = wrong + result.errors;
    const diskMb = readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0) / 1e6;
    const verdict = judge(samples, durationSec, options.maxSlopeMbPerMin ?? 2, (options.maxGrowthPercent ?? 10) / 100, (options.maxPeakPercent ?? 20) / 100);
    const loadedSamples = samples.filter((s) => s.t > 0);
    const peak = loadedSamples.reduce((a, b) => (b.rssMb > a.rssMb ? b : a));
    return {
      minutes,
      sampleSec,
      connections,
      workers: listenerWorkers(env),
      samples,
      verdict,
      startRssMb: idle.rssMb,
      peak,
      end: samples[samples.length - 1]!,
      denials,
      errors,
      meanRate: denials / endAt,
      serverStartMs,
      loadAtStart,
      loadAtEnd: os.loadavg().map((l) => l.toFixed(2)).join(' / '),
      neighbours: seen,
      diskMb,
    };
  } finally {
    if (server) await stop(server.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------------------------------------------

/** One row a minute (the sample nearest each whole minute), the idle sample first and the last one at the end. */
function curveRows(r: SoakResult): SoakSample[] {
  const rows: SoakSample[] = [r.samples[0]!];
  const loaded = r.samples.filter((s) => s.t > 0);
  for (let minute = 1; minute <= Math.floor(r.minutes); minute++) {
    const at = minute * 60;
    const near = loaded.reduce((a, b) => (Math.abs(b.t - at) < Math.abs(a.t - at) ? b : a));
    if (!rows.includes(near)) rows.push(near);
  }
  if (!rows.includes(r.end)) rows.push(r.end);
  return rows;
}

export function formatSoakResult(r: SoakResult): string {
  const v = r.verdict;
  const table = markdownTable(
    ['minute', 'total RSS MB', 'listeners MB', 'primary MB', 'Next.js MB', 'denials', 'denials/s', 'errors', 'load (1 min)'],
    curveRows(r).map((s) => [
      s.t === 0 ? 'idle' : fmt(s.t / 60),
      fmt(s.rssMb),
      fmt(s.byRole.listener),
      fmt(s.byRole.primary),
      fmt(s.byRole.next),
      fmtInt(s.denials),
      s.t === 0 ? '–' : fmtInt(s.rate),
      String(s.errors),
      s.load1.toFixed(2),
    ]),
  );
  return [
    `The server as \`npm start\` runs it (${r.workers} decision listener process${r.workers === 1 ? '' : 'es'} and Next.js; a fresh SQLite database), ` +
      `autocannon with ${r.connections} connections sending \`POST /api/v1/permissions/check\` for ${fmt(r.minutes)} minutes with the admin token, ` +
      `a new agent name on every call and a new tool name on every fourth: every call is a denial (\`agent_allowlist\`) written before its answer. ` +
      `RSS = VmRSS of every process of the server (the process \`npm start\` runs and its descendants), read every ${r.sampleSec} s; ` +
      `the table shows the sample nearest each whole minute. Load average ${r.loadAtStart} at the start, ${r.loadAtEnd} at the end (1/5/15 min).`,
    '',
    table,
    '',
    `Start (idle, after the start): ${fmt(r.startRssMb)} MB; peak: ${fmt(r.peak.rssMb)} MB at ${fmt(r.peak.t / 60)} min; end: ${fmt(r.end.rssMb)} MB after ` +
      `${fmt(r.end.t / 60)} min and ${fmtInt(r.denials)} denials at ${fmtInt(r.meanRate)} a second, ${r.errors} errors. The database's files: ` +
      `${fmtInt(r.diskMb)} MB at the end (${fmtInt((r.diskMb * 1e6) / Math.max(1, r.denials))} bytes a denial, search index and daily counts included).`,
    `Flat after warm-up: warm-up the first ${fmt(v.warmUpSec / 60)} min; the first minute after it ${fmt(v.warmLevelMb)} MB (median), the last minute ` +
      `${fmt(v.endLevelMb)} MB (${v.growth >= 0 ? '+' : ''}${(100 * v.growth).toFixed(1)}%, at most +${(100 * v.maxGrowth).toFixed(0)}%); the highest sample after warm-up ` +
      `${fmt(v.peakAfterWarmUpMb)} MB (${v.peakGrowth >= 0 ? '+' : ''}${(100 * v.peakGrowth).toFixed(1)}%, at most +${(100 * v.maxPeakGrowth).toFixed(0)}%); slope over the second half ` +
      `${v.slopeMbPerMin >= 0 ? '+' : ''}${fmt(v.slopeMbPerMin)} MB/min (${fmt(v.bytesPerDenial)} bytes a denial; at most ${fmt(v.maxSlopeMbPerMin)} MB/min): ` +
      `**${v.flat ? 'flat' : 'NOT FLAT'}**.`,
    `What else the machine ran (the CPU of every other process, and the busiest of them; first half | second half): ${r.neighbours.join(' | ')}.`,
  ].join('\n');
}

/** The heading of the soak's section in bench/RESULTS.md. */
export const SOAK_SECTION = '## Memory under a spray of unique agent names (`bench/soak.ts`)';

/** Put this run's section into bench/RESULTS.md (replacing the one before), leaving the rest of the file as it is. */
function writeSection(r: SoakResult): string {
  const file = fileURLToPath(new URL('./RESULTS.md', import.meta.url));
  const text = readFileSync(file, 'utf8');
  const section = `${SOAK_SECTION}\n\nRun alone on ${new Date().toISOString()} (\`SOAK_MINUTES=${r.minutes} node --import tsx bench/soak.ts\`).\n\n${formatSoakResult(r)}\n`;
  const at = text.indexOf(SOAK_SECTION);
  let out: string;
  if (at < 0) out = `${text.trimEnd()}\n\n${section}`;
  else {
    const next = text.indexOf('\n## ', at + SOAK_SECTION.length);
    out = `${text.slice(0, at)}${section}${next < 0 ? '' : text.slice(next)}`;
  }
  writeFileSync(file, out);
  return file;
}

if (isMain(import.meta.url)) {
  runSoakBench(soakOptionsFromEnv({ log: (l) => console.error(l) }))
    .then((r) => {
      console.log(formatSoakResult(r));
      console.error(`soak: wrote its section of ${writeSection(r)}`);
      if (!r.verdict.flat || r.errors > 0) process.exitCode = 1;
    })
    .catch((e: unknown) => {
      console.error(e instanceof Error ? e.message : e);
      process.exitCode = 1;
    });
}
