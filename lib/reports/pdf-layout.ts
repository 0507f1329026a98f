/**
 * A small page-layout layer over jsPDF for the audit report: A4, a text cursor that moves down the page, paragraphs,
 * headings, figure cards, tables that wrap their cells and break across pages with their header repeated, and a
 * running header and footer drawn on every page once the page count is known ("page N of M").
 *
 * jsPDF was chosen by measurement (see docs/audit-report.md): it renders 40 A4 pages of tables in about half the
 * time and two thirds of the memory of pdfkit and pdf-lib here, synchronously, with the standard PDF fonts built in
 * (nothing read from disk at run time, so it bundles into the server as it is).
 */
import { jsPDF } from 'jspdf';

export const PAGE = { width: 595.28, height: 841.89 } as const;
export const MARGIN = { left: 56, right: 56, top: 78, bottom: 62 } as const;
export const CONTENT_WIDTH = PAGE.width - MARGIN.left - MARGIN.right;
const BOTTOM = PAGE.height - MARGIN.bottom;
/** The padding inside a table's cells. */
const PAD = 4;
/** A section starts on the current page only with this much room left (about a third of a page). */
const SECTION_ROOM = 260;

export const COLORS = {
  text: '#1c2430',
  muted: '#5b6675',
  faint: '#8a94a3',
  rule: '#dfe3e8',
  head: '#f1f4f8',
  zebra: '#fafbfc',
  accent: '#2f5aa8',
  ok: '#2e7d4f',
  okBg: '#eef8f2',
  danger: '#b3261e',
  dangerBg: '#fdf1f0',
} as const;

export type Align = 'left' | 'right';

export interface Cell {
  text: string;
  /** a bold first part, on its own lines above the text */
  lead?: string;
  bold?: boolean;
  mono?: boolean;
  color?: string;
}

export type CellInput = string | number | Cell;

/** A column: its title, its share of the table's width (the shares are scaled to add up), and its alignment. */
export type Column = readonly [title: string, width: number, align?: Align];

export interface TableOptions {
  fontSize?: number;
  /** x and width of the table (default: the content column) */
  x?: number;
  width?: number;
  /** shown above the repeated header on a continuation page */
  caption?: string;
  /** cut cells longer than this many lines, with an ellipsis */
  maxLines?: number;
}

const WIN_ANSI_EXTRA = '€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ';
const REPLACEMENTS: Record<string, string> = { '≤': '<=', '≥': '>=', '→': '->', '←': '<-', '✓': 'yes', '✗': 'no', '≠': '!=', '\u2212': '-', '\u00a0': ' ', '\t': ' ' };

/** Text the standard PDF fonts can show (WinAnsi): known symbols spelt out, anything else as "?". */
export function pdfText(value: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 63;
    if (REPLACEMENTS[ch] !== undefined) out += REPLACEMENTS[ch];
    else if ((code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRA.includes(ch)) out += ch;
    else if (code === 0x0a) out += '\n';
    else if (code < 0x20) out += ' ';
    else out += '?';
  }
  return out;
}

/** Where an identifier may be broken: after one of these (policy:bfsi/no-pii-export, decision_log_all, rpt_0199-…). */
const SEPARATOR = /(?<=[._\-:/])/;

/**
 * Greedy line filling by words, as a reader expects: a line breaks between words; a word too long for a whole line (an
 * identifier, a path) breaks after a separator (`.`, `_`, `-`, `:`, `/`), never inside a part; only a part with no
 * separator that is itself wider than the line (a hash) is cut where the line ends.
 */
export function wrapText(text: string, width: number, measure: (t: string) => number): string[] {
  const lines: string[] = [];
  let line = '';
  const fits = (t: string) => measure(t) <= width;
  const push = () => {
    lines.push(line);
    line = '';
  };
  for (const word of text.split(/ +/)) {
    const candidate = line === '' ? word : `${line} ${word}`;
    if (fits(candidate)) {
      line = candidate;
      continue;
    }
    if (line !== '' && fits(word)) {
      push();
      line = word;
      continue;
    }
    // Too long for a line of its own: its parts, packed after what the line holds when the first part fits there.
    const parts = word.split(SEPARATOR).flatMap((part) => (fits(part) ? [part] : cutToWidth(part, width, measure)));
    let first = true;
    for (const part of parts) {
      const joined = first ? (line === '' ? part : `${line} ${part}`) : `${line}${part}`;
      if (fits(joined)) line = joined;
      else {
        if (line !== '') push();
        line = part;
      }
      first = false;
    }
  }
  if (line !== '' || lines.length === 0) push();
  return lines;
}

/** A part with no separator wider than the line (a hash, a long number): cut into pieces that fit. */
function cutToWidth(part: string, width: number, measure: (t: string) => number): string[] {
  const out: string[] = [];
  let piece = '';
  for (const ch of part) {
    if (piece !== '' && measure(piece + ch) > width) {
      out.push(piece);
      piece = '';
    }
    piece += ch;
  }
  if (piece !== '') out.push(piece);
  return out;
}

/** The font style of a cell. */
const styleOf = (c: Cell) => (c.mono ? (c.bold ? 'mono-bold' : 'mono') : c.bold ? 'bold' : 'normal');

function cellOf(c: CellInput): Cell {
  if (typeof c === 'string') return { text: c };
  if (typeof c === 'number') return { text: c.toLocaleString('en-US') };
  return c;
}

export interface Running {
  left: string;
  right: string;
  left2: string;
  right2: string;
  footer: string;
}

export class PdfLayout {
  readonly doc: jsPDF;
  y: number = MARGIN.top;
  /** 1-based page number of each named anchor (for the contents) */
  readonly anchors = new Map<string, number>();

  constructor(meta: { title: string; subject: string; author: string; keywords: string; created: Date }) {
    this.doc = new jsPDF({ unit: 'pt', format: 'a4', compress: true, putOnlyUsedFonts: true });
    this.doc.setProperties({ title: meta.title, subject: meta.subject, author: meta.author, keywords: meta.keywords, creator: 'Swarm Permissions' });
    this.doc.setCreationDate(meta.created);
    this.doc.setLineHeightFactor(1.25);
    this.font(9.5);
  }

  get page(): number {
    return this.doc.getNumberOfPages();
  }

  font(size: number, style: 'normal' | 'bold' | 'mono' | 'mono-bold' = 'normal', color: string = COLORS.text): void {
    const mono = style === 'mono' || style === 'mono-bold';
    this.doc.setFont(mono ? 'courier' : 'helvetica', style === 'bold' || style === 'mono-bold' ? 'bold' : 'normal');
    this.doc.setFontSize(size);
    this.doc.setTextColor(color);
  }

  lineHeight(size: number): number {
    return size * 1.3;
  }

  /** Lines of `text` at the current font within `width` (see wrapText). */
  wrap(text: string, width: number): string[] {
    const measure = (t: string) => this.doc.getTextWidth(t);
    return pdfText(text)
      .split('\n')
      .flatMap((para) => wrapText(para, width, measure));
  }

  newPage(): void {
    this.doc.addPage('a4', 'portrait');
    this.y = MARGIN.top;
  }

  /** Room for `h` points more on this page, or a new page. */
  ensure(h: number): void {
    if (this.y + h > BOTTOM) this.newPage();
  }

  /**
   * A section title, in the PDF outline, remembered for the contents. It follows the section before on the same page
   * when a good part of the page is left (a section per page left pages with a few lines), else starts a new page;
   * `newPage` always starts one (the first section after the cover).
   */
  section(anchor: string, title: string, intro?: string, o: { newPage?: boolean } = {}): void {
    if (this.y > MARGIN.top) {
      if (o.newPage || BOTTOM - this.y < SECTION_ROOM) this.newPage();
      else this.y += 22;
    }
    this.anchors.set(anchor, this.page);
    this.doc.outline.add(null, pdfText(title), { pageNumber: this.page });
    this.font(16, 'bold');
    this.doc.text(pdfText(title), MARGIN.left, this.y, { baseline: 'top' });
    this.y += 24;
    this.rule(MARGIN.left, MARGIN.left + 36, this.y, COLORS.accent, 1.2);
    this.y += 12;
    if (intro) this.paragraph(intro, { color: COLORS.muted });
  }

  /** A horizontal line from x0 to x1 at y. */
  rule(x0: number, x1: number, y: number, color: string, width: number): void {
    this.doc.setDrawColor(color);
    this.doc.setLineWidth(width);
    this.doc.line(x0, y, x1, y);
  }

  heading(title: string, keepWith = 60): void {
    this.ensure(22 + keepWith);
    this.y += 8;
    this.font(11.5, 'bold');
    this.doc.text(pdfText(title), MARGIN.left, this.y, { baseline: 'top' });
    this.y += 18;
  }

  paragraph(text: string, o: { size?: number; color?: string; after?: number } = {}): void {
    const size = o.size ?? 9.5;
    this.font(size, 'normal', o.color ?? COLORS.text);
    const lh = this.lineHeight(size);
    for (const line of this.wrap(text, CONTENT_WIDTH)) {
      this.ensure(lh);
      this.font(size, 'normal', o.color ?? COLORS.text);
      this.doc.text(line, MARGIN.left, this.y, { baseline: 'top' });
      this.y += lh;
    }
    this.y += o.after ?? 6;
  }

  /** A paragraph in the muted colour, smaller: what a figure or a table needs said beside it. */
  note(text: string, size = 8.5): void {
    this.paragraph(text, { size, color: COLORS.muted });
  }

  /** Label / value pairs, the labels in a narrow muted column. */
  keyValues(rows: [string, string][], o: { labelWidth?: number; size?: number } = {}): void {
    const size = o.size ?? 9.5;
    const lw = o.labelWidth ?? 120;
    const lh = this.lineHeight(size);
    for (const [label, value] of rows) {
      this.font(size);
      const lines = this.wrap(value, CONTENT_WIDTH - lw);
      this.ensure(lines.length * lh + 3);
      this.font(size, 'normal', COLORS.muted);
      this.doc.text(pdfText(label), MARGIN.left, this.y, { baseline: 'top' });
      this.font(size);
      lines.forEach((l, i) => this.doc.text(l, MARGIN.left + lw, this.y + i * lh, { baseline: 'top' }));
      this.y += lines.length * lh + 3;
    }
    this.y += 4;
  }

  /** A row of figure cards: a large number and a label under it (with an optional note). */
  figures(items: { value: string; label: string; note?: string }[], perRow = 4): void {
    const gap = 10;
    const w = (CONTENT_WIDTH - gap * (perRow - 1)) / perRow;
    for (let i = 0; i < items.length; i += perRow) {
      const row = items.slice(i, i + perRow);
      const h = row.some((r) => r.note) ? 62 : 50;
      this.ensure(h + gap);
      row.forEach((item, j) => {
        const x = MARGIN.left + j * (w + gap);
        this.doc.setDrawColor(COLORS.rule);
        this.doc.setFillColor('#ffffff');
        this.doc.setLineWidth(0.75);
        this.doc.roundedRect(x, this.y, w, h, 4, 4, 'FD');
        this.font(17, 'bold');
        this.doc.text(pdfText(item.value), x + 10, this.y + 9, { baseline: 'top' });
        this.font(8, 'normal', COLORS.muted);
        this.doc.text(this.wrap(item.label, w - 20)[0] ?? '', x + 10, this.y + 32, { baseline: 'top' });
        if (item.note) {
          this.font(7.5, 'normal', COLORS.faint);
          this.doc.text(this.wrap(item.note, w - 20)[0] ?? '', x + 10, this.y + 44, { baseline: 'top' });
        }
      });
      this.y += h + gap;
    }
    this.y += 2;
  }

  /** A framed note: the state in words first (never colour alone), then its lines. */
  callout(ok: boolean, title: string, lines: string[]): void {
    const size = 9;
    const lh = this.lineHeight(size);
    this.font(size);
    const wrapped = lines.map((l) => this.wrap(l, CONTENT_WIDTH - 28));
    const h = 16 + 16 + wrapped.reduce((n, w) => n + w.length * lh + 2, 0) + 6;
    this.ensure(h);
    this.doc.setFillColor(ok ? COLORS.okBg : COLORS.dangerBg);
    this.doc.setDrawColor(ok ? COLORS.ok : COLORS.danger);
    this.doc.rect(MARGIN.left, this.y, CONTENT_WIDTH, h, 'F');
    this.doc.setLineWidth(3);
    this.doc.line(MARGIN.left + 1.5, this.y, MARGIN.left + 1.5, this.y + h);
    this.font(11, 'bold', ok ? COLORS.ok : COLORS.danger);
    this.doc.text(pdfText(title), MARGIN.left + 16, this.y + 11, { baseline: 'top' });
    let y = this.y + 32;
    for (const w of wrapped) {
      this.font(size);
      w.forEach((l, i) => this.doc.text(l, MARGIN.left + 16, y + i * lh, { baseline: 'top' }));
      y += w.length * lh + 2;
    }
    this.y += h + 10;
  }

  /**
   * A table's geometry: its column widths, its header's lines and height, and each row's cells, lines (a lead's lines
   * first, as blanks, where its text is drawn apart in bold) and height; what table() draws and tableHeight() adds up.
   */
  private layTable(columns: Column[], rows: CellInput[][], o: TableOptions) {
    const size = o.fontSize ?? 8;
    const lh = this.lineHeight(size);
    const width = o.width ?? CONTENT_WIDTH;
    const total = columns.reduce((n, [, w]) => n + w, 0);
    const widths = columns.map(([, w]) => (w / total) * width);
    this.font(size - 0.5, 'bold');
    const header = columns.map(([title], i) => this.wrap(title, widths[i]! - 2 * PAD));
    const headerHeight = Math.max(...header.map((l) => l.length)) * lh + 2 * PAD;
    const laid = rows.map((row) => {
      const cells = row.map(cellOf);
      const leads = cells.map((c, i) => {
        if (!c.lead) return [];
        this.font(size, 'bold');
        return this.wrap(c.lead, widths[i]! - 2 * PAD);
      });
      const lines = cells.map((c, i) => {
        this.font(size, styleOf(c));
        let l = this.wrap(c.text, widths[i]! - 2 * PAD);
        if (o.maxLines && l.length > o.maxLines) l = [...l.slice(0, o.maxLines - 1), `${l[o.maxLines - 1]!.replace(/.{0,2}$/, '')}…`];
        return [...leads[i]!.map(() => ''), ...l];
      });
      return { cells, leads, lines, height: Math.max(1, ...lines.map((l) => l.length)) * lh + 2 * PAD - 1 };
    });
    return { size, lh, width, widths, header, headerHeight, rows: laid };
  }

  /** The height a table will take on one page (its header, rows and the space after it), to keep it whole. */
  tableHeight(columns: Column[], rows: CellInput[][], o: TableOptions = {}): number {
    const t = this.layTable(columns, rows, o);
    return t.rows.reduce((h, r) => h + r.height, t.headerHeight) + (rows.length === 0 ? t.lh + 2 * PAD : 0) + 10;
  }

  /**
   * A table: cells wrap within their column, a row never splits, and a row that does not fit starts a new page where
   * the header (and the caption, marked "continued") is drawn again.
   */
  table(columns: Column[], rows: CellInput[][], o: TableOptions = {}): void {
    const { size, lh, width, widths, header, headerHeight, rows: laid } = this.layTable(columns, rows, o);
    const x0 = o.x ?? MARGIN.left;
    // The lines of column i (at x) from line `from` on, aligned as the column is (a cell's lead always to the left).
    const draw = (lines: string[], i: number, x: number, right = columns[i]?.[2] === 'right', from = 0) =>
      lines.forEach((l, j) => j >= from && this.doc.text(l, right ? x + widths[i]! - PAD : x + PAD, this.y + PAD + j * lh, { baseline: 'top', align: right ? 'right' : 'left' }));

    const drawHeader = (continued: boolean) => {
      if (continued && o.caption) {
        this.font(8, 'normal', COLORS.muted);
        this.doc.text(pdfText(`${o.caption} (continued)`), x0, this.y, { baseline: 'top' });
        this.y += 13;
      }
      this.doc.setFillColor(COLORS.head);
      this.doc.rect(x0, this.y, width, headerHeight, 'F');
      let x = x0;
      this.font(size - 0.5, 'bold', COLORS.muted);
      header.forEach((lines, i) => {
        draw(lines, i, x);
        x += widths[i]!;
      });
      this.y += headerHeight;
      this.rule(x0, x0 + width, this.y, '#c5ccd6', 0.6);
    };

    this.ensure(headerHeight + lh + 2 * PAD);
    drawHeader(false);
    laid.forEach(({ cells, leads, lines, height: h }, r) => {
      if (this.y + h > BOTTOM) {
        this.newPage();
        drawHeader(true);
      }
      if (r % 2 === 1) {
        this.doc.setFillColor(COLORS.zebra);
        this.doc.rect(x0, this.y, width, h, 'F');
      }
      let x = x0;
      cells.forEach((c, i) => {
        const lead = leads[i]!;
        if (lead.length) {
          this.font(size, 'bold', c.color ?? COLORS.text);
          draw(lead, i, x, false);
        }
        this.font(size, styleOf(c), c.color ?? COLORS.text);
        draw(lines[i]!, i, x, undefined, lead.length);
        x += widths[i]!;
      });
      this.y += h;
      this.rule(x0, x0 + width, this.y, '#e8ebef', 0.4);
    });
    if (rows.length === 0) {
      this.font(size, 'normal', COLORS.muted);
      this.doc.text('None in this period.', x0 + PAD, this.y + PAD, { baseline: 'top' });
      this.y += lh + 2 * PAD;
    }
    this.y += 10;
  }

  /** Draw the running header and footer on every page (after the last page is written). */
  finish(running: Running): Buffer {
    const n = this.doc.getNumberOfPages();
    for (let i = 1; i <= n; i++) {
      this.doc.setPage(i);
      this.font(8, 'bold', COLORS.text);
      this.doc.text(pdfText(running.left), MARGIN.left, 30, { baseline: 'top' });
      this.font(8, 'normal', COLORS.muted);
      this.doc.text(pdfText(running.right), PAGE.width - MARGIN.right, 30, { baseline: 'top', align: 'right' });
      this.doc.text(pdfText(running.left2), MARGIN.left, 42, { baseline: 'top' });
      this.doc.text(pdfText(running.right2), PAGE.width - MARGIN.right, 42, { baseline: 'top', align: 'right' });
      this.doc.setDrawColor(COLORS.rule);
      this.doc.setLineWidth(0.6);
      this.doc.line(MARGIN.left, 56, PAGE.width - MARGIN.right, 56);
      this.doc.line(MARGIN.left, PAGE.height - 44, PAGE.width - MARGIN.right, PAGE.height - 44);
      this.font(8, 'normal', COLORS.muted);
      this.doc.text(pdfText(running.footer), MARGIN.left, PAGE.height - 38, { baseline: 'top' });
      this.doc.text(`page ${i} of ${n}`, PAGE.width - MARGIN.right, PAGE.height - 38, { baseline: 'top', align: 'right' });
    }
    return Buffer.from(this.doc.output('arraybuffer'));
  }
}
