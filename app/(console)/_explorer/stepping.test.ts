import { describe, expect, it } from 'vitest';
import { stepsIn } from './stepping';

describe('stepping through the rows on screen from the open one', () => {
  it('knows the neighbours of a row in the list', () => {
    const s = stepsIn([30, 20, 10], 20);
    expect(s).toMatchObject({ inList: true, canStep: { prev: true, next: true } });
    expect([s.neighbour(-1), s.neighbour(1)]).toEqual([30, 10]);
    expect(stepsIn([30, 20, 10], 30).canStep).toEqual({ prev: false, next: true });
    expect(stepsIn([30, 20, 10], 10).canStep).toEqual({ prev: true, next: false });
  });

  it('offers no step for a row that is not on screen (a link to an older one)', () => {
    const s = stepsIn([30, 20], 5);
    expect(s).toMatchObject({ inList: false, canStep: { prev: false, next: false } });
    expect(s.neighbour(1)).toBeUndefined();
    expect(stepsIn([30, 20], undefined).inList).toBe(false);
  });
});
