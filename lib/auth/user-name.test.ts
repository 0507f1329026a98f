import { describe, expect, it } from 'vitest';
import { foldUserName, sameUserName, USER_NAME_PATTERN } from './user-name';

describe('user names', () => {
  it('are one name whatever the case of their letters', () => {
    expect(sameUserName('ADMIN', 'admin')).toBe(true);
    expect(sameUserName('Olivia.Ops@Example.COM', 'olivia.ops@example.com')).toBe(true);
    expect(sameUserName('admin', 'admin2')).toBe(false);
    expect(foldUserName('AdMiN_.-@9')).toBe('admin_.-@9');
  });

  it('fold only ASCII capitals, never by a locale (what the databases fold alike)', () => {
    // U+0130 (capital I with dot) and the Kelvin sign fold to ASCII in Unicode: never a name's letters here
    expect(foldUserName('\u0130')).toBe('\u0130');
    expect(foldUserName('\u212a')).toBe('\u212a');
    expect(sameUserName('\u212aate', 'kate')).toBe(false);
    expect(USER_NAME_PATTERN.test('\u212aate')).toBe(false);
  });
});
