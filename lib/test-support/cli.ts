/**
 * Run the `swarm` command as the CLI tests do: in this process through the CLI's own entry (cli/run.ts main: the
 * command line, an environment of the test's, stdout and stderr captured, the exit status returned), or, where the real
 * binary's exit status or its stdin is the point, as a child process (node bin/swarm.mjs).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '@/cli/run';
import { TEST_AGENTS } from './temp-app';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(REPO_ROOT, 'bin', 'swarm.mjs');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `swarm args…` in this process, with `env` as its whole environment (a copy: a command cannot change the test's) and
 * `stdin` as what it reads (only `swarm hook` reads it). The command reads its environment from the context it is
 * given, never from process.env, and returns its status without setting process.exitCode: nothing of one run is left
 * for the next. Runs may overlap: each writes to its own capture.
 */
export async function runSwarm(args: readonly string[], env: NodeJS.ProcessEnv, options: { stdin?: string } = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const io = { out: (text: string) => void (stdout += text), err: (text: string) => void (stderr += text) };
  const code = await main({ io, env: { ...env } }, [...args], async () => options.stdin ?? '');
  return { code, stdout, stderr };
}

/**
 * The real binary in a child process (about half a second each, more under load): for what only the process shows,
 * its exit status as a shell sees it and the event it reads on stdin.
 */
export function runSwarmBinary(args: readonly string[], env: NodeJS.ProcessEnv, options: { stdin?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, env, timeout: options.timeoutMs ?? 30_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

/**
 * A folder with the test agents and an empty policy, and the environment a CLI run gets for it: this database and
 * config only, no flag variables or database settings from the machine running the tests.
 */
export function cliWorkspace(prefix: string, dbFile: string): { dir: string; dbPath: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const dbPath = join(dir, dbFile);
  writeFileSync(join(dir, 'agents.yaml'), TEST_AGENTS);
  writeFileSync(join(dir, 'permission_policies.yaml'), 'rules: []\n');
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('SWARM_') || key.startsWith('ML_TEAM_')) delete env[key];
  env.SWARM_DB = dbPath;
  env.SWARM_CONFIG_DIR = dir;
  return { dir, dbPath, env };
}
