/** The navigation's and the landing's table of page roles says what the pages themselves enforce. */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canOpen, landingFor, PAGE_ROLES } from '@/app/_components/page-roles';

describe('page roles', () => {
  it('match the role each console page requires', () => {
    // Folders whose name starts with _ are private to Next.js (shared components such as _explorer), not pages.
    const pages = readdirSync('app/(console)', { withFileTypes: true }).filter((d) => d.isDirectory() && !d.name.startsWith('_'));
    expect(pages.length).toBeGreaterThan(5);
    // A section's role is checked by its layout (before its loading line streams: a refusal answers 403), or by a page
    // of its own that only redirects; every page below a section is under that check.
    const checks: [path: string, role: string][] = [];
    for (const file of readdirSync('app/(console)', { recursive: true, encoding: 'utf8' })) {
      if (file.startsWith('_') || !/(^|\/)(layout|page)\.tsx$/.test(file)) continue;
      const m = /(?:requirePage|sectionLayout)\('([^']+)', '(\w+)'\)/.exec(readFileSync(`app/(console)/${file}`, 'utf8'));
      if (m) checks.push([m[1]!, m[2]!]);
    }
    for (const dir of pages) expect(checks.some(([path]) => path === `/${dir.name}` || path.startsWith(`/${dir.name}/`)), dir.name).toBe(true);
    for (const [path, role] of checks) expect(PAGE_ROLES[path], path).toBe(role);
    // no page decides again under a layout that decided (a decision is recorded once)
    for (const file of readdirSync('app/(console)', { recursive: true, encoding: 'utf8' })) {
      if (!/(^|\/)page\.tsx$/.test(file) || file.startsWith('_')) continue;
      const section = file.split('/')[0]!;
      const decidedAbove = [`${section}/layout.tsx`, `${file.replace(/page\.tsx$/, 'layout.tsx')}`].some((l) => { try { return /(?:requirePage|sectionLayout)\(/.test(readFileSync(`app/(console)/${l}`, 'utf8')); } catch { return false; } });
      if (decidedAbove) expect(readFileSync(`app/(console)/${file}`, 'utf8'), file).not.toMatch(/requirePage\(/);
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
