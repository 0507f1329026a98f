/**
 * bin/cli-bundle.mjs: the `swarm` command runs from one bundle of its sources, made once and made again when a source
 * changes. Tested on a small checkout of its own in a temp folder (a cli/main.ts and a module it imports), whose bundle
 * is run in a child process as the real command runs it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { bundledCli } from '@/bin/cli-bundle.mjs';
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
    const url = await bundledCli(root);
    expect(url).toBeDefined();
    const file = fileURLToPath(url!);
    expect(run(url!)).toBe(`first ${join(root, 'lib', 'word.ts')}`);

    const old = new Date(Date.now() - 60_000);
    utimesSync(file, old, old); // to see whether it is written again
    const made = statSync(file).mtimeMs;
    expect(await bundledCli(root)).toBe(url);
    expect(statSync(file).mtimeMs).toBe(made);

    writeWord(root, 'second');
    expect(await bundledCli(root)).toBe(url);
    expect(run(url!)).toBe(`second ${join(root, 'lib', 'word.ts')}`);
    expect(readdirSync(join(root, 'node_modules', '.cache', 'swarm-cli'))).toEqual([file.split('/').pop()]); // nothing partial left
  });

  it('is made again when a source it was made from is gone, and is not had when the source does not compile or the cache cannot be written', async () => {
    const root = checkout('first');
    await bundledCli(root);
    rmSync(join(root, 'lib', 'word.ts'));
    expect(await bundledCli(root)).toBeUndefined(); // the import of @/lib/word no longer resolves: tsx will say so

    writeWord(root, 'back');
    writeFileSync(join(root, 'cli', 'main.ts'), 'this is not TypeScript (\n');
    expect(await bundledCli(root)).toBeUndefined();

    const readOnly = checkout('x');
    writeFileSync(join(readOnly, 'node_modules', '.cache'), 'a file where the cache folder would be');
    expect(await bundledCli(readOnly)).toBeUndefined();
  });

  it('is what bin/swarm.mjs runs: the real command answers from it', () => {
    const out = execFileSync(process.execPath, [join(REPO_ROOT, 'bin', 'swarm.mjs'), '--help'], { encoding: 'utf8' });
    expect(out).toContain('swarm denials');
    const cached = readdirSync(join(REPO_ROOT, 'node_modules', '.cache', 'swarm-cli'));
    expect(cached.some((f) => /^cli-[0-9a-f]{12}\.mjs$/.test(f))).toBe(true);
  });
});
