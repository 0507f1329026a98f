/**
 * `npm run examples` (scripts/examples.ts): every example under examples/ runs offline against a server of the real
 * build that the command starts, the command playing the operator, and exits 0 only when each saw what its comments
 * say (issue 40).
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { E2E } from './fixtures/accounts';

test('npm run examples: every example sees what its comments say', async () => {
  test.setTimeout(240_000);
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/examples.ts'], { env: { ...process.env, EXAMPLES_PORT: String(E2E.port + 85) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  expect(code, out).toBe(0);
  const examples = readdirSync('examples').filter((f) => f.endsWith('.ts'));
  expect(examples.length).toBeGreaterThanOrEqual(2);
  for (const f of examples) expect(out).toContain(`examples: ${f.replace(/\.ts$/, '')} saw what it says`);
  expect(out).toContain(`examples: all ${examples.length} saw what they say`);
  // The operator's part was played: each example's held call was approved.
  expect(out.match(/examples: the operator approved apr_\S+ \(200\)/g)?.length).toBeGreaterThanOrEqual(2);
});
