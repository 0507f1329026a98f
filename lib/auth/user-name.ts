/**
 * User names: what one may be, and how two are compared. A name holds ASCII letters, digits and `_ . @ -` only, and two
 * names that differ only in the case of their letters are the same name everywhere: creating a user (password, single
 * sign-on, `swarm users add`), signing in, the break-glass comparison, the sign-in throttle and every lookup by name.
 * The database holds the same rule as a unique index on the folded name (users_username_folded).
 */

/** 1 to 64 ASCII letters, digits, ".", "_", "@" or "-". */
export const USER_NAME_PATTERN = /^[a-zA-Z0-9_.@-]{1,64}$/;

/**
 * A name as it is compared: its ASCII capitals lowered, nothing else touched (as SQLite's lower() and PostgreSQL's
 * lower() under the "C" collation do; a locale's own folding, a Turkish dotless i say, never enters).
 */
export function foldUserName(name: string): string {
  return name.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** Whether two names are one name. */
export function sameUserName(a: string, b: string): boolean {
  return foldUserName(a) === foldUserName(b);
}
