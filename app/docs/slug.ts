/** Anchors of the documentation's headings (app/docs/markdown.tsx, tests/docs-links.test.ts). */

/** The anchor of a heading, as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
export function slugOf(text: string): string {
  return text
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

