/** Run the real `swarm` command in a child process, as the CLI tests do: its exit code and what it printed. */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_AGENTS } from './temp-app';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(REPO_ROOT, 'bin', 'swarm.mjs');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Asynchronous, so that independent runs can overlap (each costs about half a second). */
export function runSwarm(args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, env, timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * A folder with the test agents and an empty policy, and the environment a CLI child gets for it: this database and
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
