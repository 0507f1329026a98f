/**
 * One error map: every code an error of the product carries (an AppError's, or the `code` of the engine's, the audit
 * trail's and the database's own errors) is in lib/errors.ts, so every route answers it the same way, with the status
 * the map gives. Read from the sources, so a new error class cannot be forgotten.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CODED_ERRORS, ERROR_STATUS } from '@/lib/errors';

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'node_modules' && name !== 'migrations') out.push(...sources(path));
    } else if (/\.(ts|tsx|mjs)$/.test(name) && !/\.test\.ts$/.test(name)) out.push(path);
  }
  return out;
}

const files = ['lib', 'db', 'cli', 'app'].flatMap(sources);

describe('the error map', () => {
  it('holds every code an error of the product carries', () => {
    const missing: string[] = [];
    let seen = 0;
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/readonly code = '([A-Z_]+)'|new AppError\(\s*'([A-Z_]+)'/g)) {
        seen++;
        const code = m[1] ?? m[2]!;
        if (!(code in ERROR_STATUS) && !(code in CODED_ERRORS)) missing.push(`${file}: ${code}`);
      }
    }
    expect(seen).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  });

  it('answers the failures a caller cannot act on with words of their own and the right status', () => {
    expect(CODED_ERRORS.AUDIT_UNAVAILABLE).toMatchObject({ status: 503 });
    expect(CODED_ERRORS.DATABASE_UNAVAILABLE).toMatchObject({ status: 503, retry: true });
    expect(CODED_ERRORS.HOOK_WOULD_WAIT).toMatchObject({ status: 503, code: 'RETRY', retry: true });
    for (const [code, answer] of Object.entries(CODED_ERRORS)) {
      // A server's own failure never sends its internal message (paths, SQL) to the caller.
      if (answer.status >= 500) expect(answer.message, code).toBeDefined();
    }
  });
});
