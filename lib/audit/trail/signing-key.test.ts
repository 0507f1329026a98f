/**
 * The audit signing key of a fresh key folder, made by processes that start at the same moment (two e2e servers, a
 * server and its listener workers, a server and the CLI): all of them sign with one key, none fails or reads half a file.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOrCreateSigningKey, verifierKey } from './checkpoints';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A process that says it is ready, waits for `go` (a file), then loads or creates the key and prints its verifier key. */
function contender(dir: string, go: string): { ready: Promise<void>; key: Promise<string> } {
  const script = `
    import { existsSync } from 'node:fs';
    import { loadOrCreateSigningKey, verifierKey } from './lib/audit/trail/checkpoints.ts';
    process.stdout.write('ready\\n');
    while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setImmediate(r));
    const k = loadOrCreateSigningKey(${JSON.stringify(dir)});
    process.stdout.write(verifierKey(k.name, k.raw));`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
    if (out.startsWith('ready\n')) markReady();
  });
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const key = new Promise<string>((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve(out.slice('ready\n'.length)) : reject(new Error(`exit ${code}: ${err}`)))),
  );
  return { ready, key };
}

describe('the audit signing key of a fresh key folder', () => {
  it('is one key for processes that make it at the same moment, written whole, readable by its owner only', async () => {
    const root = mkdtempSync(join(tmpdir(), 'swarm-key-race-'));
    dirs.push(root);
    const dir = join(root, 'keys');
    const go = join(root, 'go');
    const contenders = Array.from({ length: 6 }, () => contender(dir, go));
    // Every contender is loaded and polling before the signal; then all of them race for the fresh folder.
    await Promise.all(contenders.map((c) => c.ready));
    writeFileSync(go, '');
    const keys = await Promise.all(contenders.map((c) => c.key));
    expect(new Set(keys).size).toBe(1);
    const mine = loadOrCreateSigningKey(dir);
    expect(verifierKey(mine.name, mine.raw)).toBe(keys[0]);
    expect(readFileSync(join(dir, 'audit-signing-key.pub'), 'utf8').trim()).toBe(keys[0]);
    expect(statSync(join(dir, 'audit-signing-key.pem')).mode & 0o777).toBe(0o600);
    // Nothing half-made is left behind.
    expect(readdirSync(dir).sort()).toEqual(['audit-signing-key.pem', 'audit-signing-key.pub']);
  });
});
