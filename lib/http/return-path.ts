/**
 * Where a browser may be sent back to after signing in (`next=`): a path of this site, or nothing. One function for
 * every place that takes one (the login page and its form, the single sign-on start and callback, the console's
 * redirect to the login), so that no two of them judge a hostile value differently.
 */

/** A base no real site has: whatever parses to another origin than this one names another site. */
const BASE = new URL('http://site.invalid');

/**
 * C0 controls, DEL and the backslash, anywhere. Browsers drop tab and newline from an address before parsing it
 * (`/\t/evil.example` is `//evil.example` to a meta refresh or a Location header) and read a backslash as a slash,
 * so a value holding one is refused outright rather than cleaned.
 */
const REFUSED = /[\u0000-\u001f\u007f\\]/;

/**
 * `value` as a path of this site (path, query and fragment, as the URL parser spells them), or `fallback` when it is
 * missing or could lead anywhere else: it must begin with one slash, hold no control character nor backslash, parse
 * against a base to that base's origin, and its result must parse back to that origin too (`/.//evil.example`
 * parses to the path `//evil.example`, which a browser would take for another host).
 */
export function returnPath(value: string | null | undefined, fallback: string): string {
  if (typeof value !== 'string' || !value.startsWith('/') || REFUSED.test(value)) return fallback;
  let parsed: URL;
  try {
    parsed = new URL(value, BASE);
  } catch {
    return fallback;
  }
  if (parsed.origin !== BASE.origin) return fallback;
  const path = `${parsed.pathname}${parsed.search}${parsed.hash}`;
  if (!path.startsWith('/') || path.startsWith('//') || new URL(path, BASE).origin !== BASE.origin) return fallback;
  return path;
}
