/**
 * The documentation /docs serves: the README (its front page) and every page of docs/, read from the server's own
 * checkout (the files a reader of the repository sees, never a copy). A page is named by its file ("deployment" for
 * docs/deployment.md); nothing else can be asked for.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DocPage {
  /** the name in /docs/<name> */
  name: string;
  /** the file, from the repository's root */
  file: string;
  /** its first heading */
  title: string;
}

const ROOT = process.cwd();

function titleOf(text: string, fallback: string): string {
  return /^#\s+(.+)$/m.exec(text)?.[1]?.trim() ?? fallback;
}

/** Every page, the README first. */
export function docPages(): DocPage[] {
  const pages: DocPage[] = [{ name: 'readme', file: 'README.md', title: 'Swarm Permissions (README)' }];
  for (const f of readdirSync(join(/*turbopackIgnore: true*/ ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort()) {
    const name = f.replace(/\.md$/, '');
    pages.push({ name, file: `docs/${f}`, title: titleOf(readFileSync(join(/*turbopackIgnore: true*/ ROOT, 'docs', f), 'utf8'), name) });
  }
  return pages;
}

/** The page of this name and its text, or undefined. */
export function docPage(name: string): (DocPage & { text: string }) | undefined {
  const page = docPages().find((p) => p.name === name);
  return page && { ...page, text: readFileSync(join(/*turbopackIgnore: true*/ ROOT, page.file), 'utf8') };
}

/** A file of the documentation by its path from the root (and from docs/), to its page name: how links are rewritten. */
export function docLinks(pages: readonly DocPage[] = docPages()): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of pages) {
    out.set(p.file, p.name);
    if (p.file.startsWith('docs/')) out.set(p.file.slice('docs/'.length), p.name);
  }
  out.set('README.md', 'readme');
  return out;
}
