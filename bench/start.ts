/**
 * How long the `swarm` command takes from the shell's point of view: from the bundle of its sources (bin/swarm.mjs,
 * bin/bundle.mjs) against loading the same sources through tsx (the reference, how the command ran before), in the same
 * run, with a bare `node -e ''` as the floor. Each command runs `--runs` times (default 7), one after another; the
 * median is reported.
 *
 *   node --import tsx bench/start.ts
 *   node --import tsx bench/start.ts --runs 15
 *
 * Commands: `--help` (the command line only), `denials --limit 1` (opens the application on a temp SQLite file and
 * reads), and `hook claude-code` with a PreToolUse event on stdin (what Claude Code runs before each tool call).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, isMain, markdownTable } from './util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface StartRow {
  command: string;
  bundleMs: number;
  tsxMs: number;
  /** bundle / tsx */
  ratio: number;
}

export interface StartBenchResult {
  runs: number;
  bareNodeMs: number;
  rows: StartRow[];
}

function medianMs(runs: number, args: readonly string[], env: NodeJS.ProcessEnv, input?: string): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const r = spawnSync(process.execPath, args, { cwd: ROOT, env, input, encoding: 'utf8' });
    times.push(performance.now() - started);
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export function runStartBench(runs = 7): StartBenchResult {
  const dir = mkdtempSync(join(tmpdir(), 'swarm-bench-start-'));
  try {
    cpSync(join(ROOT, 'config'), join(dir, 'config'), { recursive: true });
    const env = { ...process.env, SWARM_DB: join(dir, 'bench.db'), SWARM_CONFIG_DIR: join(dir, 'config'), SWARM_LOG_LEVEL: 'error' };
    const event = JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 't1', session_id: 's1', cwd: dir });
    const commands: [string, string[], string?][] = [
      ['--help', ['--help']],
      ['denials --limit 1', ['denials', '--limit', '1']],
      ['hook claude-code (one PreToolUse event)', ['hook', 'claude-code'], event],
    ];
    // the database is created and migrated once, and the bundle made, before anything is timed
    medianMs(1, ['bin/swarm.mjs', 'denials', '--limit', '1'], env);
    const bareNodeMs = medianMs(runs, ['-e', ''], env);
    const rows = commands.map(([command, args, input]): StartRow => {
      const bundleMs = medianMs(runs, ['bin/swarm.mjs', ...args], env, input);
      const tsxMs = medianMs(runs, ['--import', 'tsx', 'cli/main.ts', ...args], env, input);
      return { command, bundleMs, tsxMs, ratio: bundleMs / tsxMs };
    });
    return { runs, bareNodeMs, rows };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatStartResult(r: StartBenchResult): string {
  return [
    `Median of ${r.runs} runs of each; a bare \`node -e ''\` took ${fmt(r.bareNodeMs, 0)} ms in the same run.`,
    '',
    markdownTable(
      ['command', 'from the bundle (ms)', 'through tsx (ms, reference)', 'bundle / tsx'],
      r.rows.map((row) => [row.command, fmt(row.bundleMs, 0), fmt(row.tsxMs, 0), fmt(row.ratio, 2)]),
    ),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const at = process.argv.indexOf('--runs');
  console.log(formatStartResult(runStartBench(at > 0 ? Number(process.argv[at + 1]) : 7)));
}
