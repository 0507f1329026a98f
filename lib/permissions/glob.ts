/**
 * Compile a glob to a RegExp once. `**` matches anything (across `/`), `*` anything but `/`, `?` one character
 * but `/`. Everything else is literal.
 */
export function compileGlob(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        source += '.*';
        i++;
      } else {
        source += '[^/]*';
      }
    } else if (c === '?') {
      source += '[^/]';
    } else {
      source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`);
}

export function isGlob(pattern: string): boolean {
  return /[*?]/.test(pattern);
}

/** A matcher for one or several names or globs: exact names by set lookup, globs by regex. */
export interface NameMatcher {
  readonly exact: ReadonlySet<string>;
  readonly globs: readonly RegExp[];
  /** true when the matcher accepts every value (a lone "*" or "**") */
  readonly any: boolean;
}

export function compileNames(patterns: readonly string[]): NameMatcher {
  const exact = new Set<string>();
  const globs: RegExp[] = [];
  let any = false;
  for (const p of patterns) {
    if (p === '*' || p === '**') any = true;
    else if (isGlob(p)) globs.push(compileGlob(p));
    else exact.add(p);
  }
  return { exact, globs, any };
}

export function matchesName(m: NameMatcher, value: string | undefined): boolean {
  if (m.any) return true;
  if (value === undefined) return false;
  if (m.exact.has(value)) return true;
  for (const g of m.globs) if (g.test(value)) return true;
  return false;
}
