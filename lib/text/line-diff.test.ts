import { describe, expect, it } from 'vitest';
import { diffCounts, diffParts, lineDiff, linesOf, MAX_CELLS } from './line-diff';

/** The diff as a unified diff's lines: ' ' same, '-' removed, '+' added. */
const unified = (before: string | null, after: string | null) => lineDiff(before, after).map((l) => `${l.kind === 'same' ? ' ' : l.kind === 'added' ? '+' : '-'}${l.text}`);

describe('the line diff of a proposal', () => {
  it('reads lines as a file has them: a final newline ends the last line, CRLF too, and no file has no lines', () => {
    expect(linesOf('a\nb\n')).toEqual(['a', 'b']);
    expect(linesOf('a\r\nb')).toEqual(['a', 'b']);
    expect(linesOf('')).toEqual([]);
    expect(linesOf(null)).toEqual([]);
    expect(linesOf('a\n\n')).toEqual(['a', '']);
  });

  it('marks the one changed line as removed then added, with the lines around it unchanged', () => {
    expect(unified('rules:\n  - id: a\n    decision: ALLOW\n', 'rules:\n  - id: a\n    decision: DENY\n')).toEqual([' rules:', '   - id: a', '-    decision: ALLOW', '+    decision: DENY']);
  });

  it('finds the longest common subsequence, not only a common head and tail', () => {
    // x and y swap places around a kept middle: one of them must be removed and added, the rest kept
    const d = unified('x\nm1\ny\nm2\nz', 'y\nm1\nx\nm2\nz');
    expect(d.filter((l) => l.startsWith(' '))).toHaveLength(3);
    expect(d.filter((l) => l.startsWith('-'))).toHaveLength(2);
    expect(d.filter((l) => l.startsWith('+'))).toHaveLength(2);
    // classic example: ABCABBA -> CBABAC keeps an LCS of 4
    const lcs = lineDiff('A\nB\nC\nA\nB\nB\nA', 'C\nB\nA\nB\nA\nC').filter((l) => l.kind === 'same');
    expect(lcs).toHaveLength(4);
  });

  it('rebuilds both texts exactly from its lines, with the right line numbers', () => {
    const before = 'a\nb\nc\nd\ne\nf';
    const after = 'a\nc\nX\nd\nf\ng';
    const d = lineDiff(before, after);
    expect(d.filter((l) => l.kind !== 'added').map((l) => l.text)).toEqual(linesOf(before));
    expect(d.filter((l) => l.kind !== 'removed').map((l) => l.text)).toEqual(linesOf(after));
    for (const l of d) {
      if (l.kind !== 'added') expect(linesOf(before)[l.oldNo - 1]).toBe(l.text);
      if (l.kind !== 'removed') expect(linesOf(after)[l.newNo - 1]).toBe(l.text);
    }
  });

  it('shows a new file as all added and a removed file as all removed', () => {
    expect(unified(null, 'a\nb')).toEqual(['+a', '+b']);
    expect(unified('a\nb\n', null)).toEqual(['-a', '-b']);
    expect(lineDiff('same\n', 'same\n')).toEqual([{ kind: 'same', text: 'same', oldNo: 1, newNo: 1 }]);
  });

  it('falls back to all removed then all added when the differing middle is larger than the table allows, still exact', () => {
    const side = Math.ceil(Math.sqrt(MAX_CELLS)) + 10;
    const before = ['head', ...Array.from({ length: side }, (_, i) => `old ${i}`), 'tail'].join('\n');
    const after = ['head', ...Array.from({ length: side }, (_, i) => `new ${i}`), 'tail'].join('\n');
    const d = lineDiff(before, after);
    expect(diffCounts(d)).toEqual({ added: side, removed: side });
    expect(d[0]).toMatchObject({ kind: 'same', text: 'head' });
    expect(d.at(-1)).toMatchObject({ kind: 'same', text: 'tail', oldNo: side + 2, newNo: side + 2 });
  });

  it('folds long unchanged runs into counts and keeps the context around each change', () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n');
    const after = before.replace('l10', 'L10');
    const parts = diffParts(lineDiff(before, after), 2);
    expect(parts.map((p) => (p.kind === 'skipped' ? p.count : p.lines.length))).toEqual([8, 6, 7]);
    expect(parts[1]).toMatchObject({ kind: 'lines' });
    // nothing folded when every line is near a change
    expect(diffParts(lineDiff('a\nb', 'a\nc'), 3)).toHaveLength(1);
  });
});
