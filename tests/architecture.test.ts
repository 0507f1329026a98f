/**
 * Dependencies point one way (DESIGN.md section 5): app/ (pages and route adapters) uses lib/, and lib/, cli/ and db/
 * never import app/. The route table is data in lib (lib/http/route-table.ts); each app/ route file only adapts one of
 * its entries for Next.js, so nothing below app/ has a reason to reach up into it.
 *
 * The imports are read from the tokens of each file (static imports, re-exports, `import()` and `require()`), so a
 * word inside a comment, a string or a template is never taken for one. (TypeScript 7 has no JavaScript API to ask.)
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const SOURCE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (name === 'node_modules') return [];
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return SOURCE.test(name) && !name.endsWith('.d.ts') ? [p] : [];
  });
}

type Token = { kind: 'word' | 'punct'; text: string } | { kind: 'string'; text: string };

/** After one of these a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = new Set(['(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '+', '-', '*', '%', '<', '>', '~', '^', 'return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'yield', 'await']);

/**
 * The tokens of a JavaScript or TypeScript text that matter for its imports: words, punctuation and string literals
 * (their values). Comments, template literals' text and regular expressions are dropped; the code inside a template's
 * `${...}` is read like any other.
 */
function tokensOf(text: string): Token[] {
  const tokens: Token[] = [];
  // One entry per open `${`: the braces opened inside it, so its closing `}` returns to the template's text.
  const templates: number[] = [];
  let i = 0;
  const template = () => {
    // From just after a backtick or a `}` that closed `${`: to the closing backtick, or into the next `${`.
    while (i < text.length) {
      const c = text[i]!;
      if (c === '\\') i += 2;
      else if (c === '`') {
        i++;
        tokens.push({ kind: 'punct', text: '`' });
        return;
      } else if (c === '$' && text[i + 1] === '{') {
        i += 2;
        templates.push(0);
        tokens.push({ kind: 'punct', text: '${' });
        return;
      } else i++;
    }
  };
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) i++;
    else if (c === '/' && text[i + 1] === '/') i = text.indexOf('\n', i) < 0 ? text.length : text.indexOf('\n', i);
    else if (c === '/' && text[i + 1] === '*') i = text.indexOf('*/', i + 2) < 0 ? text.length : text.indexOf('*/', i + 2) + 2;
    else if (c === "'" || c === '"') {
      let value = '';
      i++;
      while (i < text.length && text[i] !== c && text[i] !== '\n') {
        if (text[i] === '\\') i++;
        value += text[i] ?? '';
        i++;
      }
      i++;
      tokens.push({ kind: 'string', text: value });
    } else if (c === '`') {
      i++;
      template();
    } else if (c === '/' && (tokens.length === 0 || BEFORE_REGEX.has(tokens[tokens.length - 1]!.text))) {
      // A regular expression: to its closing slash (a slash inside a class does not close it), then its flags.
      i++;
      let inClass = false;
      while (i < text.length && text[i] !== '\n' && (inClass || text[i] !== '/')) {
        if (text[i] === '\\') i++;
        else if (text[i] === '[') inClass = true;
        else if (text[i] === ']') inClass = false;
        i++;
      }
      i++;
      while (i < text.length && /\w/.test(text[i]!)) i++;
      tokens.push({ kind: 'punct', text: 'regex' });
    } else if (/[\w$]/.test(c)) {
      const start = i;
      while (i < text.length && /[\w$]/.test(text[i]!)) i++;
      tokens.push({ kind: 'word', text: text.slice(start, i) });
    } else {
      i++;
      if (templates.length > 0 && c === '{') templates[templates.length - 1]!++;
      if (templates.length > 0 && c === '}') {
        if (templates[templates.length - 1] === 0) {
          templates.pop();
          template();
          continue;
        }
        templates[templates.length - 1]!--;
      }
      tokens.push({ kind: 'punct', text: c });
    }
  }
  return tokens;
}

interface Import {
  specifier: string;
  /** `import('...')`: loaded when the code runs, not with the module */
  dynamic: boolean;
}

function importListOf(text: string): Import[] {
  const tokens = tokensOf(text);
  const found: Import[] = [];
  tokens.forEach((t, k) => {
    if (t.kind !== 'string') return;
    const before = tokens[k - 1];
    const call = before?.text === '(' ? tokens[k - 2] : undefined;
    const callee = call && call.kind === 'word' && (call.text === 'import' || call.text === 'require') && tokens[k - 3]?.text !== '.' ? call.text : undefined;
    // `from '...'` ends an import or a re-export; `import '...'` is an import for its effects.
    if ((before?.kind === 'word' && (before.text === 'from' || before.text === 'import')) || callee) found.push({ specifier: t.text, dynamic: callee === 'import' });
  });
  return found;
}

/** The specifiers a file imports, in any form a bundler or Node.js would follow. */
export function importsOf(text: string): string[] {
  return importListOf(text).map((i) => i.specifier);
}

const RESOLVED = ['', '.ts', '.tsx', '.mts', '.mjs', '.js', '/index.ts'];

/** The files a file loads with itself (static imports of this repository's files, `import type` included: harmless). */
function staticDependencies(file: string): string[] {
  return importListOf(readFileSync(file, 'utf8')).flatMap(({ specifier, dynamic }) => {
    const to = dynamic ? undefined : target(file, specifier);
    if (to === undefined) return [];
    const found = RESOLVED.map((ext) => join(ROOT, to + ext)).find((p) => existsSync(p) && statSync(p).isFile());
    return found ? [found] : [];
  });
}

/** Every file reached from `file` by static imports, as a chain of files from it (the first path found to each). */
function reachable(file: string): Map<string, string[]> {
  const chains = new Map<string, string[]>([[file, [file]]]);
  const queue = [file];
  while (queue.length > 0) {
    const from = queue.shift()!;
    for (const to of staticDependencies(from)) {
      if (chains.has(to)) continue;
      chains.set(to, [...chains.get(from)!, to]);
      queue.push(to);
    }
  }
  return chains;
}

/** The repository-relative path an import names, when it names a file of this repository (`@/x` or relative). */
function target(file: string, specifier: string): string | undefined {
  if (specifier === '@' || specifier.startsWith('@/')) return specifier.slice(2);
  if (specifier.startsWith('.')) return relative(ROOT, resolve(dirname(file), specifier)).split(sep).join('/');
  return undefined;
}

/** Every import of app/ from the given folders, as "file: specifier". */
export function importsOfApp(folders: readonly string[]): string[] {
  const found: string[] = [];
  for (const folder of folders) {
    for (const file of sourceFiles(join(ROOT, folder))) {
      for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
        const to = target(file, specifier);
        if (to !== undefined && (to === 'app' || to.startsWith('app/'))) found.push(`${relative(ROOT, file).split(sep).join('/')}: ${specifier}`);
      }
    }
  }
  return found;
}

describe('dependencies point one way', () => {
  it('reads every form of import, and none inside a comment', () => {
    const text = [
      "import a from '@/app/x';",
      "export { b } from '../app/y';",
      "const c = await import('@/app/z');",
      "const d = require('../../app/w');",
      "import type { E } from './e';",
      "// import f from '@/app/commented';",
      "const s = 'not an import of @/app/q'; /* import g from '@/app/block'; */",
      "const t = `import h from '@/app/template' ${await import('./in-template')} // not a comment`;",
      "const r = /'/g; import i from './after-regex';",
      "export * from './all';",
    ].join('\n');
    expect(importsOf(text)).toEqual(['@/app/x', '../app/y', '@/app/z', '../../app/w', './e', './in-template', './after-regex', './all']);
  });

  it('lib/, cli/ and db/ never import from app/ (the route table is data in lib; app/ only adapts it)', () => {
    expect(importsOfApp(['lib', 'cli', 'db'])).toEqual([]);
  });

  it('a route definition never loads the route table with itself, so loading the table never waits on itself', () => {
    const table = join(ROOT, 'lib/http/route-table.ts');
    const cycles = sourceFiles(join(ROOT, 'lib/http/routes'))
      .map((file) => reachable(file).get(table))
      .filter((chain) => chain !== undefined)
      .map((chain) => chain.map((f) => relative(ROOT, f).split(sep).join('/')).join(' -> '));
    expect(cycles).toEqual([]);
    // The check itself sees such a chain: the listener reaches the table.
    expect(reachable(join(ROOT, 'lib/server/front.ts')).has(table)).toBe(true);
  });
});
