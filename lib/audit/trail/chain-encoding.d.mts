/** The canonical encoding of a row's chained values (chain-encoding.mjs). */
export function encodeRow(values: readonly unknown[], start?: number, end?: number): string;
/** SHA-256 (hex) of `<previous hash>\n<id>\n<encoded values>`. */
export function chainHash(prevHash: string, id: number, encoded: string): string;
