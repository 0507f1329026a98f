import { describe, expect, it } from 'vitest';
import { durationWords } from './duration-words';

describe('a configured duration in words', () => {
  it('takes the largest whole unit', () => {
    expect(durationWords(172_800)).toBe('2 d');
    expect(durationWords(7_200)).toBe('2 h');
    expect(durationWords(300)).toBe('5 min');
    expect(durationWords(90)).toBe('90 s');
  });

  it('stops at hours when asked', () => {
    expect(durationWords(86_400, 'h')).toBe('24 h');
    expect(durationWords(90, 'h')).toBe('90 s');
  });
});
