/**
 * Every link of the documentation resolves (issue 41, item 7): in README.md, docs/*.md and the client package's README,
 * a link to a file of the repository names one that exists, and a link to a heading (#anchor, or file.md#anchor) names
 * a heading that is there, as GitHub and /docs make its anchor. Links out of the repository are not followed.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { slugOf } from '@/app/docs/slug';

const FILES = ['README.md', 'packages/client/README.md', ...readdirSync('docs').filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The anchors of a Markdown file's headings (a repeated heading gets -1, -2…), code blocks left out. */
function anchorsOf(file: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const h = /^#{1,6}\s+(.*)$/.exec(line);
    if (!h) continue;
    const base = slugOf(h[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The links of a Markdown file outside code: [text](target). */
function linksOf(file: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    for (const m of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) out.push(m[1]!);
  }
  return out;
}

describe('the documentation\'s links', () => {
  it('name files and headings that exist', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of FILES) {
      for (const target of linksOf(file)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        checked++;
        const [path, anchor] = target.split('#', 2) as [string, string | undefined];
        const resolved = path === '' ? file : normalize(join(dirname(file), path));
        if (!existsSync(resolved)) {
          broken.push(`${file}: ${target} (no ${resolved})`);
          continue;
        }
        if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) broken.push(`${file}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(3);
  });

  it('include the help of every console page: a page of docs/ and, where named, a heading of it', async () => {
    const { HELP_LINKS } = await import('@/app/_components/help-links');
    expect(HELP_LINKS.length).toBeGreaterThanOrEqual(8);
    for (const [prefix, target] of HELP_LINKS) {
      const [path, anchor] = target.replace(/^\/docs\//, '').split('#', 2) as [string, string | undefined];
      const file = `docs/${path}.md`;
      expect(existsSync(file), `${prefix}: ${file}`).toBe(true);
      if (anchor) expect(anchorsOf(file).has(anchor), `${prefix}: #${anchor} in ${file}`).toBe(true);
    }
  });

  it('make anchors as GitHub does', () => {
    expect(slugOf('Agents anywhere: the client and the framework adapters')).toBe('agents-anywhere-the-client-and-the-framework-adapters');
    expect(slugOf('Hooks (`config/hooks.yaml`)')).toBe('hooks-confighooksyaml');
    expect(slugOf('PostgreSQL and several servers')).toBe('postgresql-and-several-servers');
  });
});
