/** A rule-source attribution: one colour per family, always with its text. */
export function ruleFamily(ruleSource: string): string {
  const i = ruleSource.indexOf(':');
  return i < 0 ? ruleSource : ruleSource.slice(0, i);
}

export function RuleSourceBadge({ ruleSource }: { ruleSource: string }) {
  const family = ruleFamily(ruleSource).replace(/[^a-z_]/g, '');
  return <span className={`badge badge-${family}`}>{ruleSource}</span>;
}
