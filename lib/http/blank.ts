/** An empty query parameter (`?name=`, what a blank form field sends) means "not given", not an invalid value. */
export const blankToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
