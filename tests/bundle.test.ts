/**
 * bin/bundle.mjs: the `swarm` command, the server's start and its listener workers run from one bundle of their
 * sources, made once and made again when a source changes. Tested on a small checkout of its own in a temp folder (a
 * cli/main.ts and a module it imports), whose bundle is run in a child process as the real command runs it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { bundled } from '@/bin/bundle.mjs';
import { REPO_ROOT } from '@/lib/test-support/cli';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** a checkout with the repository's packages, whose command prints a word and where its module file is */
function checkout(word: string): string {
  const root = mkdtempSync(join(tmpdir(), 'swarm-bundle-'));
  dirs.push(root);
  mkdirSync(join(root, 'cli'));
  mkdirSync(join(root, 'lib'));
  mkdirSync(join(root, 'node_modules'));
  symlinkSync(join(REPO_ROOT, 'node_modules', 'zod'), join(root, 'node_modules', 'zod'));
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { paths: { '@/*': ['./*'] } } }));
  writeFileSync(join(root, 'cli', 'main.ts'), "import { said } from '@/lib/word';\nconsole.log(said());\n");
  writeWord(root, word);
  return root;
}

function writeWord(root: string, word: string): void {
  writeFileSync(
    join(root, 'lib', 'word.ts'),
    `import { z } from 'zod';\nimport { fileURLToPath } from 'node:url';\nexport const said = (): string => z.string().parse('${word}') + ' ' + fileURLToPath(import.meta.url);\n`,
  );
}

const run = (url: string): string => execFileSync(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(url)})`], { encoding: 'utf8' }).trim();

describe('the swarm command from one bundle of its sources', () => {
  it('is made once, runs the sources (packages imported, import.meta.url the source file), and is made again when a source changes', async () => {
    const root = checkout('first');
    const url = await bundled(root, 'cli/main.ts');
    expect(url).toBeDefined();
    const file = fileURLToPath(url!);
    expect(run(url!)).toBe(`first ${join(root, 'lib', 'word.ts')}`);

    const old = new Date(Date.now() - 60_000);
    utimesSync(file, old, old); // to see whether it is written again
    const made = statSync(file).mtimeMs;
    expect(await bundled(root, 'cli/main.ts')).toBe(url);
    expect(statSync(file).mtimeMs).toBe(made);

    writeWord(root, 'second');
    expect(await bundled(root, 'cli/main.ts')).toBe(url);
    expect(run(url!)).toBe(`second ${join(root, 'lib', 'word.ts')}`);
    expect(readdirSync(join(root, 'node_modules', '.cache', 'swarm'))).toEqual([file.split('/').pop()]); // nothing partial left
  });

  it('is made again when a source it was made from is gone, and is not had when a source does not compile, changed while it was made, or the cache cannot be written', async () => {
    const root = checkout('first');
    await bundled(root, 'cli/main.ts');
    rmSync(join(root, 'lib', 'word.ts'));
    expect(await bundled(root, 'cli/main.ts')).toBeUndefined(); // the import of @/lib/word no longer resolves: tsx will say so

    writeWord(root, 'back');
    writeFileSync(join(root, 'cli', 'main.ts'), 'this is not TypeScript (\n');
    expect(await bundled(root, 'cli/main.ts')).toBeUndefined();

    // a source whose time says it was written while the bundle was being made: not kept, made again next time
    writeFileSync(join(root, 'cli', 'main.ts'), "import { said } from '@/lib/word';\nconsole.log(said());\n");
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, 'lib', 'word.ts'), later, later);
    expect(await bundled(root, 'cli/main.ts')).toBeUndefined();
    const earlier = new Date(Date.now() - 60_000);
    utimesSync(join(root, 'lib', 'word.ts'), earlier, earlier);
    expect(await bundled(root, 'cli/main.ts')).toBeDefined();

    const readOnly = checkout('x');
    writeFileSync(join(readOnly, 'node_modules', '.cache'), 'a file where the cache folder would be');
    expect(await bundled(readOnly, 'cli/main.ts')).toBeUndefined();
  });

  it('is what bin/swarm.mjs runs: the real command answers from it', () => {
    const out = execFileSync(process.execPath, [join(REPO_ROOT, 'bin', 'swarm.mjs'), '--help'], { encoding: 'utf8' });
    expect(out).toContain('swarm denials');
    const cached = readdirSync(join(REPO_ROOT, 'node_modules', '.cache', 'swarm'));
    expect(cached.some((f) => /^cli-main-[0-9a-f]{12}\.mjs$/.test(f))).toBe(true);
  });

  it('bin/run.mjs runs an entry with its own arguments, and says how to call it without one', () => {
    const root = checkout('unused');
    writeFileSync(join(root, 'args.ts'), 'console.log(JSON.stringify(process.argv.slice(2)));\n');
    mkdirSync(join(root, 'bin'));
    for (const f of ['run.mjs', 'bundle.mjs']) writeFileSync(join(root, 'bin', f), readFileSync(join(REPO_ROOT, 'bin', f)));
    symlinkSync(join(REPO_ROOT, 'node_modules', 'esbuild'), join(root, 'node_modules', 'esbuild'));
    expect(execFileSync(process.execPath, [join(root, 'bin', 'run.mjs'), 'args.ts', '--demo', 'x'], { encoding: 'utf8' }).trim()).toBe('["--demo","x"]');
    expect(readdirSync(join(root, 'node_modules', '.cache', 'swarm')).some((f) => f.startsWith('args-'))).toBe(true);
    expect(() => execFileSync(process.execPath, [join(root, 'bin', 'run.mjs')], { stdio: 'pipe' })).toThrow(/usage: node bin\/run.mjs ENTRY/);
  });
});
