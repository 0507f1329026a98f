/**
 * `npm run examples`: every example under examples/ run offline against a server this starts (the product as
 * `npm start` runs it, on a free port, with a database and key folder of its own in a temporary folder and the
 * repository's config), with an agent token of the demo's deployer. It plays the operator: when an example says
 * "waiting for approval apr_…", the request is approved over the API, as a person on the console would. Exits 0 only
 * when every example exited 0 (each checks that it saw what its comments say).
 *
 *   npm run examples                 all of them
 *   npm run examples -- ai-sdk       the ones whose file name contains "ai-sdk"
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '@/lib/server/serve';

const ROOT = resolve(import.meta.dirname, '..');
const only = process.argv.slice(2);
const examples = readdirSync(join(ROOT, 'examples'))
  .filter((f) => f.endsWith('.ts') && (only.length === 0 || only.some((o) => f.includes(o))))
  .sort();

const dir = mkdtempSync(join(tmpdir(), 'swarm-examples-'));
const port = Number(process.env.EXAMPLES_PORT || (await freePort()));
const url = `http://127.0.0.1:${port}`;
const env: NodeJS.ProcessEnv = {
  ...process.env,
  PORT: String(port),
  // (the signing key apart from the database, as a real installation keeps it)
  SWARM_DB: join(dir, 'db', 'swarm.db'),
  SWARM_CONFIG_DIR: join(dir, 'config'),
  SWARM_POLICY_FILE: join(dir, 'config', 'permission_policies.yaml'),
  SWARM_AUDIT_KEY_DIR: join(dir, 'keys'),
  SWARM_ADMIN_PASSWORD: 'examples-admin-password',
  SWARM_LOG_LEVEL: 'error',
};
cpSync(join(ROOT, 'config'), join(dir, 'config'), { recursive: true });
mkdirSync(join(dir, 'db'));

/** The swarm CLI on the examples' database; its output, or a failure naming it. */
function swarm(...args: string[]): string {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'swarm.mjs'), ...args], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`swarm ${args.join(' ')} exited ${r.status}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}
const tokenIn = (out: string) => /swt_[A-Za-z0-9_-]+/.exec(out)![0];

let server: ChildProcess | undefined;
let failed = 0;
try {
  server = spawn(process.execPath, [join('bin', 'run.mjs'), join('scripts', 'start.ts')], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'], detached: true });
  const deadline = Date.now() + 300_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`the server exited (${server.exitCode}) before it answered`);
    if (await fetch(`${url}/api/v1/health`).then((r) => r.ok).catch(() => false)) break;
    if (Date.now() > deadline) throw new Error(`the server on ${url} did not answer within 5 minutes`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const agentToken = tokenIn(swarm('tokens', 'add', '--agent', 'deployer', '--name', 'examples'));
  const operatorToken = tokenIn(swarm('users', 'add', 'olivia', '--role', 'operator', '--password', 'olivia-examples-password'));
  console.log(`examples: server on ${url}; running ${examples.join(', ')}`);

  for (const file of examples) {
    const name = file.replace(/\.ts$/, '');
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'examples', file)], {
      cwd: ROOT,
      env: { ...process.env, SWARM_URL: url, SWARM_TOKEN: agentToken, SWARM_AGENT: 'deployer', ANTHROPIC_API_KEY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const approvals: Promise<void>[] = [];
    for (const [stream, out] of [
      [child.stdout!, process.stdout],
      [child.stderr!, process.stderr],
    ] as const) {
      createInterface({ input: stream }).on('line', (line) => {
        out.write(`[${name}] ${line}\n`);
        const held = /waiting for approval (apr_[A-Za-z0-9_-]+)/.exec(line);
        if (held) approvals.push(approve(held[1]!, operatorToken, name));
      });
    }
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    await Promise.all(approvals);
    console.log(`examples: ${name} ${code === 0 ? 'saw what it says' : `FAILED (exit ${code})`}`);
    if (code !== 0) failed++;
  }
} catch (error) {
  console.error(`examples: ${(error as Error).message}`);
  failed++;
} finally {
  if (server?.pid !== undefined && server.exitCode === null) {
    const exited = new Promise((r) => server!.once('exit', r));
    process.kill(-server.pid, 'SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
}
console.log(failed === 0 ? `examples: all ${examples.length} saw what they say` : `examples: ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

/** The operator approves a held call over the API, as a person on the console would. */
async function approve(id: string, token: string, example: string): Promise<void> {
  const res = await fetch(`${url}/api/v1/approvals/${id}/approve`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ reason: `approved by npm run examples for ${example}, as an operator would` }),
  });
  console.log(`examples: the operator approved ${id} (${res.status})`);
}
