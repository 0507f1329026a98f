/**
 * A TypeScript entry of this repository (the `swarm` command, the server's start, a listener worker) as one file, so
 * that its process starts in about half the time.
 *
 * Loaded through tsx, an entry's ~170 TypeScript modules are resolved and compiled one by one by its loader hooks: about
 * 1.2 s of the 2.3–2.6 s a command takes on a quiet 2-core machine, more under load (bench/start.ts), for every command
 * (`swarm hook claude-code` runs before every tool call of an agent) and for each process of a server that (re)starts.
 * esbuild makes them one ES module in under a second, once. It is kept in node_modules/.cache/swarm/ with the size
 * and modification time of every source it was made from, and made again as soon as one of them differs (an edit, a
 * `git pull`, another checkout). Packages stay imports, resolved in node_modules when the process runs (most of the
 * time left is Node loading them), and each source's `import.meta.url` stays its own file's URL, as under tsx (the
 * migrations and the worker files are found next to the sources).
 *
 * Returns the bundle's URL, or undefined when it cannot be had (the cache is not writable, esbuild is missing or
 * refuses a source): the caller then loads the sources through tsx, which says what is wrong with a source.
 */
import { createHash } from 'node:crypto';
import { accessSync, constants, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const MANIFEST_PREFIX = '// swarm-bundle-sources: ';

/** [path, size, mtimeMs] of every source the bundle was made from, from its first line; [] when unreadable */
function sourcesOf(file) {
  try {
    const text = readFileSync(file, 'utf8');
    const first = text.slice(0, text.indexOf('\n'));
    return first.startsWith(MANIFEST_PREFIX) ? JSON.parse(first.slice(MANIFEST_PREFIX.length)) : [];
  } catch {
    return [];
  }
}

function stamp(path) {
  const s = statSync(path);
  return [path, s.size, s.mtimeMs];
}

function unchanged(sources) {
  if (sources.length === 0) return false;
  try {
    return sources.every(([path, size, mtimeMs]) => {
      const [, s, m] = stamp(path);
      return s === size && m === mtimeMs;
    });
  } catch {
    return false; // a source is gone
  }
}

async function make(root, entry, file) {
  const { build } = await import('esbuild');
  // From the next millisecond on: a file's mtime has a fraction of a millisecond, so a source written just before, in
  // the same millisecond, would otherwise look written during the build and the bundle be thrown away for nothing.
  const before = Date.now();
  while (Date.now() === before);
  const started = Date.now();
  const result = await build({
    absWorkingDir: root,
    entryPoints: [join(root, entry)],
    tsconfig: join(root, 'tsconfig.json'),
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [
      {
        name: 'sources-as-under-tsx',
        setup(b) {
          // `@/...` is the checkout's root, as in tsconfig.json; resolved here so that one that names no file is an
          // error, never an import of a package called "@"
          b.onResolve({ filter: /^@\// }, async (args) => {
            const found = await b.resolve(`./${args.path.slice(2)}`, { resolveDir: root, kind: args.kind });
            return found.errors.length > 0 ? { errors: found.errors } : { path: found.path };
          });
          b.onLoad({ filter: /\.[cm]?tsx?$/ }, (args) => ({
            contents: readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
            loader: args.path.endsWith('x') ? 'tsx' : 'ts',
          }));
        },
      },
    ],
  });
  const sources = [join(root, 'tsconfig.json'), ...Object.keys(result.metafile.inputs).map((p) => join(root, p))].map(stamp);
  // a source written while esbuild read the sources may be in the bundle as it was before: nothing is kept, and the
  // next run makes the bundle again
  if (sources.some(([, , mtimeMs]) => mtimeMs >= started)) throw new Error('a source changed while the bundle was made');
  // written beside it, then renamed over it: a command starting meanwhile reads the old bundle or the new one, whole
  const partial = `${file}.${process.pid}.partial`;
  try {
    writeFileSync(partial, `${MANIFEST_PREFIX}${JSON.stringify(sources)}\n${result.outputFiles[0].text}`);
    renameSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
  }
}

/** `entry`: a path from `root`, such as cli/main.ts */
export async function bundled(root, entry) {
  // one bundle per checkout and entry: worktrees share node_modules through a link
  const dir = join(root, 'node_modules', '.cache', 'swarm');
  const name = entry.replace(/\.[cm]?tsx?$/, '').replaceAll(/[^A-Za-z0-9]+/g, '-');
  const file = join(dir, `${name}-${createHash('sha256').update(root).digest('hex').slice(0, 12)}.mjs`);
  try {
    if (!unchanged(sourcesOf(file))) {
      mkdirSync(dir, { recursive: true });
      accessSync(dir, constants.W_OK); // a read-only installation: not worth making a bundle it cannot keep
      await make(root, entry, file);
    }
    return pathToFileURL(file).href;
  } catch {
    return undefined;
  }
}

/** This repository's root (where bin/ is). */
export const ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');

/**
 * Run `entry` (a path from the root): from its bundle, or, where that cannot be had, through tsx from the sources.
 * tsx is pointed at this repository's tsconfig.json so that the `@/` import alias resolves from any directory.
 */
export async function runEntry(entry) {
  const bundle = await bundled(ROOT, entry);
  if (bundle) return import(bundle);
  const { register } = await import('tsx/esm/api');
  register({ tsconfig: join(ROOT, 'tsconfig.json') });
  return import(pathToFileURL(join(ROOT, entry)).href);
}
