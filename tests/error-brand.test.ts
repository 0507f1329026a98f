/**
 * The product's errors are recognised by their brand (lib/errors.ts isError), never by `instanceof`: the built server
 * holds a class once per chunk that bundles it, and an error made by one copy fails `instanceof` against another. Read
 * from the sources, so that a new error class without a kind, or a new `instanceof` of one, fails here; and shown with
 * two real copies of a module, as the bundler makes them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppError, isError } from '@/lib/errors';
import { PermissionDenied } from '@/lib/permissions/errors';
import { CliError, UsageError } from '@/cli/errors';

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'node_modules' && name !== 'migrations' && name !== 'fixtures') out.push(...sources(path));
    } else if (/\.(ts|tsx|mjs)$/.test(name)) out.push(path);
  }
  return out;
}

const files = ['lib', 'db', 'cli', 'app', 'scripts', 'bench', 'tests', 'e2e', 'packages'].filter((d) => {
  try {
    return statSync(d).isDirectory();
  } catch {
    return false;
  }
}).flatMap(sources);

/** Every `class X extends ...Error` of the product, with the file that declares it. */
function errorClasses(): Array<{ name: string; file: string; body: string }> {
  const out: Array<{ name: string; file: string; body: string }> = [];
  for (const file of files) {
    // the product's classes (bench/ and the tests have helpers of their own)
    if (/\.test\.ts$/.test(file) || !/^(lib|db|cli|app|scripts|packages)\//.test(file)) continue;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/class (\w+) extends (\w*Error)\b[^{]*\{/g)) {
      // the class body up to its closing brace at the start of a line
      const end = text.indexOf('\n}', m.index);
      out.push({ name: m[1]!, file, body: text.slice(m.index, end === -1 ? undefined : end) });
    }
  }
  return out;
}

describe('the error brand', () => {
  const classes = errorClasses();

  it('is carried by every error class of the product: its kind is its name and its constructor brands it', () => {
    expect(classes.length).toBeGreaterThan(20);
    const wrong: string[] = [];
    for (const { name, file, body } of classes) {
      if (!new RegExp(`static (override )?readonly kind(: string)? = '${name}';`).test(body)) wrong.push(`${file}: ${name} declares no kind '${name}'`);
      if (!body.includes(`brand(this, ${name});`)) wrong.push(`${file}: ${name} is not branded in its constructor`);
    }
    expect(wrong).toEqual([]);
  });

  it('is how they are recognised: no `instanceof` of one outside lib/errors.ts', () => {
    const names = classes.map((c) => c.name).join('|');
    const found: string[] = [];
    for (const file of files) {
      if (file === join('lib', 'errors.ts') || file === join('tests', 'error-brand.test.ts')) continue;
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(new RegExp(`instanceof (${names})\\b`, 'g'))) {
        found.push(`${file}:${text.slice(0, m.index).split('\n').length}: ${m[0]}`);
      }
    }
    expect(found).toEqual([]);
  });

  it('recognises an error made by another copy of its class, where instanceof does not', async () => {
    // A second evaluation of the same modules, as a second chunk of the built server is.
    const again = (path: string): Promise<unknown> => import(/* @vite-ignore */ `${path}?copy`);
    const copy = (await again('@/lib/errors')) as typeof import('@/lib/errors');
    const copiedDenied = (await again('@/lib/permissions/errors')) as typeof import('@/lib/permissions/errors');
    expect(copy.AppError).not.toBe(AppError);

    const error = new copy.AppError('FORBIDDEN', 'no');
    expect(error instanceof AppError).toBe(false);
    expect(isError(error, AppError)).toBe(true);
    expect(copy.isError(new AppError('CONFLICT', 'x'), copy.AppError)).toBe(true);
    expect(error.name).toBe('AppError');
    expect(error.status).toBe(403);

    const denied = new copiedDenied.PermissionDenied({ decision: 'DENY', ruleSource: 'rbac', reason: 'r' } as never);
    expect(denied instanceof PermissionDenied).toBe(false);
    expect(isError(denied, PermissionDenied)).toBe(true);
    expect(isError(denied, AppError)).toBe(false);
  });

  it('tells a subclass from its parent, and recognises nothing else', () => {
    const usage = new UsageError('bad option');
    expect(isError(usage, UsageError)).toBe(true);
    expect(isError(usage, CliError)).toBe(true);
    expect(usage.name).toBe('UsageError');
    expect(isError(new CliError('x'), UsageError)).toBe(false);
    for (const other of [new Error('x'), { code: 'FORBIDDEN', name: 'AppError' }, null, undefined, 'AppError', 42]) {
      expect(isError(other, AppError)).toBe(false);
    }
  });
});
