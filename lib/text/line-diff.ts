/**
 * A line diff of two texts (the review of a proposal, an MCP tool's new definition): the longest common subsequence of
 * their lines, so that a moved or edited rule shows as the lines removed and the lines added, and everything else as
 * unchanged. Each line carries its number in the old and the new text. Files are small (a policy of thousands of
 * rules is a few thousand lines); the common head and tail are cut off before the table is built, and a middle too
 * large for the table (MAX_CELLS) is shown as all removed then all added: correct, only less precise.
 */

export type DiffLine =
  | { kind: 'same'; text: string; oldNo: number; newNo: number }
  | { kind: 'removed'; text: string; oldNo: number }
  | { kind: 'added'; text: string; newNo: number };

/** The largest LCS table built (old lines × new lines of the part that differs): 4 million cells, 16 MB. */
export const MAX_CELLS = 4_000_000;

/** A text's lines; a final newline ends the last line rather than starting an empty one. null (no file): no lines. */
export function linesOf(text: string | null): string[] {
  if (text === null || text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Every line of `before` and `after` in order, each marked same, removed or added. */
export function lineDiff(before: string | null, after: string | null): DiffLine[] {
  const a = linesOf(before);
  const b = linesOf(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;

  const out: DiffLine[] = [];
  for (let i = 0; i < head; i++) out.push({ kind: 'same', text: a[i]!, oldNo: i + 1, newNo: i + 1 });

  const am = a.slice(head, a.length - tail);
  const bm = b.slice(head, b.length - tail);
  const n = am.length;
  const m = bm.length;
  if (n * m > MAX_CELLS) {
    am.forEach((text, i) => out.push({ kind: 'removed', text, oldNo: head + i + 1 }));
    bm.forEach((text, j) => out.push({ kind: 'added', text, newNo: head + j + 1 }));
  } else if (n > 0 || m > 0) {
    // lcs[i * (m + 1) + j]: the length of the longest common subsequence of am[i..] and bm[j..]
    const w = m + 1;
    const lcs = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * w + j] = am[i] === bm[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && am[i] === bm[j]) {
        out.push({ kind: 'same', text: am[i]!, oldNo: head + i + 1, newNo: head + j + 1 });
        i++;
        j++;
      } else if (i < n && (j === m || lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!)) {
        // At a tie the removal comes first: a changed line reads as "- old" then "+ new", as in every diff.
        out.push({ kind: 'removed', text: am[i]!, oldNo: head + i + 1 });
        i++;
      } else {
        out.push({ kind: 'added', text: bm[j]!, newNo: head + j + 1 });
        j++;
      }
    }
  }

  for (let k = 0; k < tail; k++) {
    const oi = a.length - tail + k;
    const ni = b.length - tail + k;
    out.push({ kind: 'same', text: a[oi]!, oldNo: oi + 1, newNo: ni + 1 });
  }
  return out;
}

export type DiffPart = { kind: 'lines'; lines: DiffLine[] } | { kind: 'skipped'; count: number };

/**
 * The diff for reading: the changed lines with `context` unchanged lines around each change, and each longer run of
 * unchanged lines folded into a count ("12 unchanged lines").
 */
export function diffParts(lines: readonly DiffLine[], context = 3): DiffPart[] {
  const keep = lines.map((l) => l.kind !== 'same');
  const changed = [...keep];
  for (let i = 0; i < lines.length; i++) {
    if (!changed[i]) continue;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep[k] = true;
  }
  const parts: DiffPart[] = [];
  for (let i = 0; i < lines.length; ) {
    if (keep[i]) {
      const run: DiffLine[] = [];
      while (i < lines.length && keep[i]) run.push(lines[i++]!);
      parts.push({ kind: 'lines', lines: run });
    } else {
      const start = i;
      while (i < lines.length && !keep[i]) i++;
      parts.push({ kind: 'skipped', count: i - start });
    }
  }
  return parts;
}

/** How many lines were added and removed. */
export function diffCounts(lines: readonly DiffLine[]): { added: number; removed: number } {
  return { added: lines.filter((l) => l.kind === 'added').length, removed: lines.filter((l) => l.kind === 'removed').length };
}
