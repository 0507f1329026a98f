/** The navigation's and the landing's table of page roles says what the pages themselves enforce. */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canOpen, landingFor, PAGE_ROLES } from '@/app/_components/page-roles';

describe('page roles', () => {
  it('match the role each console page requires', () => {
    // Folders whose name starts with _ are private to Next.js (shared components such as _explorer), not pages.
    const pages = readdirSync('app/(console)', { withFileTypes: true }).filter((d) => d.isDirectory() && !d.name.startsWith('_'));
    expect(pages.length).toBeGreaterThan(5);
    for (const dir of pages) {
      const text = readFileSync(`app/(console)/${dir.name}/page.tsx`, 'utf8');
      const m = /requirePage\('([^']+)', '(\w+)'\)/.exec(text);
      expect(m, dir.name).not.toBeNull();
      expect(PAGE_ROLES[m![1]!], dir.name).toBe(m![2]);
    }
  });

  it('land each role where it works, on a page it can open', () => {
    expect(landingFor('auditor')).toBe('/denials');
    expect(landingFor('operator')).toBe('/approvals');
    expect(landingFor('viewer')).toBe('/transparency');
    expect(landingFor('admin')).toBe('/denials');
    for (const role of ['viewer', 'auditor', 'operator', 'admin']) expect(canOpen(role, landingFor(role))).toBe(true);
    expect(canOpen('viewer', '/denials')).toBe(false);
    expect(canOpen('viewer', '/reports')).toBe(false);
    expect(canOpen('auditor', '/reports')).toBe(true);
  });
});
