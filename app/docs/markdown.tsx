/**
 * The documentation's Markdown (README.md and docs/*.md) as React elements, for /docs: the subset those files use
 * (headings with anchors, paragraphs, lists, fenced code, tables, block quotes; inline code, bold, emphasis, links).
 * Nothing is passed through as HTML: every text is a React text node, so a file cannot inject markup. A link to
 * another Markdown file of the documentation becomes its /docs page.
 */
import Link from 'next/link';
import type { ReactNode } from 'react';
import { slugOf } from './slug';

/** Where a link of a documentation file goes: another file's /docs page, a page of the console, or out. */
export function hrefOf(target: string, docs: ReadonlyMap<string, string>): string {
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = path.replace(/^(\.\.\/|\.\/)+/, '');
  const page = docs.get(file) ?? docs.get(`docs/${file}`);
  if (page !== undefined) return `/docs/${page}${anchor ? `#${anchor}` : ''}`;
  return target;
}

/** Inline Markdown: `code`, **bold**, *emphasis*, [text](href). */
function inline(text: string, docs: ReadonlyMap<string, string>, key = 'i'): ReactNode[] {
  const out: ReactNode[] = [];
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)|(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])/g;
  let at = 0;
  let n = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > at) out.push(text.slice(at, m.index));
    const k = `${key}-${n++}`;
    if (m[1] !== undefined) out.push(<code key={k}>{m[1]}</code>);
    else if (m[2] !== undefined) out.push(<strong key={k}>{inline(m[2], docs, k)}</strong>);
    else if (m[3] !== undefined) {
      const href = hrefOf(m[4]!, docs);
      out.push(
        href.startsWith('/') ? (
          <Link key={k} href={href}>
            {inline(m[3], docs, k)}
          </Link>
        ) : (
          <a key={k} href={href} rel="noreferrer">
            {inline(m[3], docs, k)}
          </a>
        ),
      );
    } else if (m[5] !== undefined) out.push(<em key={k}>{inline(m[5], docs, k)}</em>);
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

const cells = (line: string) =>
  line
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replace(/\\\|/g, '|'));

/** A whole file, as blocks. */
export function Markdown({ text, docs }: { text: string; docs: ReadonlyMap<string, string> }) {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const blocks: ReactNode[] = [];
  let i = 0;
  const seen = new Map<string, number>();
  while (i < lines.length) {
    const line = lines[i]!;
    const k = `b${i}`;
    if (line.trim() === '') {
      i++;
      continue;
    }
    const fence = /^\s*(```|~~~)/.exec(line);
    if (fence) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.trim().startsWith(fence[1]!)) body.push(lines[i++]!);
      i++;
      blocks.push(
        <pre key={k}>
          <code>{body.join('\n')}</code>
        </pre>,
      );
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      const base = slugOf(heading[2]!);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      const id = count === 0 ? base : `${base}-${count}`;
      const H = `h${level}` as 'h1';
      blocks.push(
        <H key={k} id={id}>
          {inline(heading[2]!, docs, k)}
        </H>,
      );
      i++;
      continue;
    }
    if (/^\s*\|/.test(line) && i + 1 < lines.length && /^\s*\|?\s*:?-{3,}/.test(lines[i + 1]!)) {
      const head = cells(line);
      i += 2;
      const rows: string[][] = [];
      while (i < lines.length && /^\s*\|/.test(lines[i]!)) rows.push(cells(lines[i++]!));
      blocks.push(
        <div key={k} className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                {head.map((h, c) => (
                  <th key={c} scope="col">
                    {inline(h, docs, `${k}h${c}`)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((r, ri) => (
                <tr key={ri}>
                  {r.map((cell, c) => (
                    <td key={c}>{inline(cell, docs, `${k}r${ri}c${c}`)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>,
      );
      continue;
    }
    if (/^\s*>/.test(line)) {
      const body: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i]!)) body.push(lines[i++]!.replace(/^\s*>\s?/, ''));
      blocks.push(<blockquote key={k}>{inline(body.join(' '), docs, k)}</blockquote>);
      continue;
    }
    const item = /^(\s*)([-*]|\d+\.)\s+(.*)$/.exec(line);
    if (item) {
      const ordered = /\d/.test(item[2]!);
      const items: string[] = [];
      while (i < lines.length) {
        const m = /^(\s*)([-*]|\d+\.)\s+(.*)$/.exec(lines[i]!);
        if (m && m[1]!.length <= item[1]!.length) {
          items.push(m[3]!);
          i++;
        } else if (lines[i]!.trim() !== '' && /^\s+/.test(lines[i]!) && items.length > 0) {
          // a continuation (or a nested item), read as part of the item above
          items[items.length - 1] += ` ${lines[i]!.trim().replace(/^([-*]|\d+\.)\s+/, '— ')}`;
          i++;
        } else break;
      }
      const L = ordered ? 'ol' : 'ul';
      blocks.push(
        <L key={k}>
          {items.map((t, n) => (
            <li key={n}>{inline(t, docs, `${k}-${n}`)}</li>
          ))}
        </L>,
      );
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== '' && !/^(#{1,6}\s|\s*```|\s*~~~|\s*\||\s*>|\s*([-*]|\d+\.)\s)/.test(lines[i]!)) para.push(lines[i++]!.trim());
    if (para.length === 0) {
      // a line no block takes (a stray marker): shown as text
      para.push(lines[i++]!.trim());
    }
    blocks.push(<p key={k}>{inline(para.join(' '), docs, k)}</p>);
  }
  return <>{blocks}</>;
}
