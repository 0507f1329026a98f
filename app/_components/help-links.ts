/**
 * Where each console page is explained in the documentation (/docs, rendered from docs/*.md): the navigation's
 * documentation link leads there from the page it is on. tests/docs-links.test.ts checks every target exists.
 */
export const HELP_LINKS: readonly (readonly [prefix: string, doc: string])[] = [
  ['/denials', '/docs/console'],
  ['/audit', '/docs/audit-trail'],
  ['/reports', '/docs/audit-report'],
  ['/approvals', '/docs/approvals'],
  ['/transparency', '/docs/feature-flags'],
  ['/policy', '/docs/change-control'],
  ['/notifications', '/docs/approvals#notifications-confignotificationsyaml'],
  ['/settings/tokens', '/docs/cli#token-lifecycle'],
];

/** The documentation of the page at `path` (the index when none is specific to it). */
export function helpFor(path: string): string {
  return HELP_LINKS.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`))?.[1] ?? '/docs';
}
