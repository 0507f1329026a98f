import { describe, expect, it } from 'vitest';
import { BUILT_IN_SOURCES } from '@/lib/permissions';
import { FAMILY_ORDER, familyInfo, orderFamilies } from './vocabulary';

describe('rule-source families', () => {
  it('say what every built-in source means; only a plugin source is called one', () => {
    const plugin = familyInfo('weekend_freeze');
    expect(plugin.meaning).toBe('a rule source added by a plugin');
    for (const source of BUILT_IN_SOURCES) {
      expect(FAMILY_ORDER).toContain(source);
      expect(familyInfo(source)).not.toEqual(plugin);
    }
    expect(familyInfo('hook').meaning).toMatch(/hook blocked the call/);
    // A name that is a property of every object is a plugin's name, not a family.
    expect(familyInfo('constructor')).toEqual(plugin);
  });

  it('stack the known families in their fixed order, then the others by name', () => {
    expect(orderFamilies(['zeta', 'policy', 'alpha', 'rbac', 'hook'])).toEqual(['rbac', 'policy', 'hook', 'alpha', 'zeta']);
  });
});
