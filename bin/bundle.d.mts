/** The URL of the bundle of `entry` (a path from `root`) for the checkout at `root`, made again if a source changed; undefined when it cannot be had. */
export function bundled(root: string, entry: string): Promise<string | undefined>;
/** This repository's root. */
export const ROOT: string;
/** Run `entry` (a path from the root) from its bundle, or through tsx. */
export function runEntry(entry: string): Promise<unknown>;
