/**
 * The console's pages, the least role each one needs, and where each role lands after signing in. Shared by the
 * navigation (a page a role cannot open is not offered), the landing redirect and the 403 page. The pages check the
 * role themselves (requirePage); this table must say the same, which tests/page-roles.test.ts checks.
 */
export type ConsoleRole = 'anonymous' | 'viewer' | 'auditor' | 'operator' | 'admin';

const RANK: Record<ConsoleRole, number> = { anonymous: 0, viewer: 1, auditor: 2, operator: 3, admin: 4 };

export const PAGE_ROLES: Record<string, ConsoleRole> = {
  '/denials': 'auditor',
  '/audit': 'auditor',
  '/reports': 'auditor',
  '/approvals': 'auditor',
  '/transparency': 'viewer',
  '/policy': 'auditor',
  '/notifications': 'admin',
  '/settings': 'admin',
  '/settings/tokens': 'admin',
};

const atLeast = (role: string, needed: ConsoleRole): boolean => (RANK[role as ConsoleRole] ?? 0) >= RANK[needed];

/** May `role` open the console page at `path` (or below it)? Unknown pages are left to the page itself. */
export function canOpen(role: string, path: string): boolean {
  const page = Object.keys(PAGE_ROLES).find((p) => path === p || path.startsWith(`${p}/`));
  return page === undefined || atLeast(role, PAGE_ROLES[page]!);
}

/** Where a role works: auditors read denials, operators decide approvals, viewers read what is in force. */
export function landingFor(role: string): string {
  if (role === 'operator') return '/approvals';
  if (role === 'viewer') return '/transparency';
  if (role === 'auditor' || role === 'admin') return '/denials';
  return '/login';
}
