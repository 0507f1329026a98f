/**
 * Server file paths as a reader may see them (the audit report, /transparency): relative to the working directory when
 * the file is inside it, else the file's name alone. Never the host's absolute path (a user name, a mount point, the
 * layout of the server), which a printed or shared page would carry to people who have no need of it.
 */
import { basename, isAbsolute, relative } from 'node:path';

/** A file path as a reader may see it: relative to the working directory, or its name alone. Never absolute. */
export function displayFile(path: string | null | undefined, cwd = process.cwd()): string {
  if (!path) return '';
  if (!isAbsolute(path)) return path;
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : basename(path);
}

/** Absolute file paths inside a message (a refused configuration's error) reduced as displayFile reduces them. */
export function withoutPaths(text: string, cwd = process.cwd()): string {
  return text.replace(/(?:[A-Za-z]:)?(?:[\\/][^\s\\/:'"`,;()]+){2,}/g, (m) => (isAbsolute(m) ? displayFile(m, cwd) : m));
}
