// The chain's canonical encoding and hash (see chain.ts), in plain JavaScript so that the verifier's worker threads
// (verify-worker.mjs, loaded at run time like the WAL checkpointer) hash rows with the very code the recorder uses.
import { hash } from 'node:crypto';

/**
 * The canonical encoding of a row's values (the chained columns, in order): `~` for NULL, `n<number>` for a number,
 * `s<length>:<text>` for a text, `b<length>:<hex>` for a BLOB, each followed by `|`. Unambiguous (a text carries its
 * length, so no content can forge a separator; a value's storage class is part of its encoding, so a TEXT turned into a
 * BLOB of the same bytes is a change) and cheap: no escaping of the JSON the arguments and traces already are (measured: 0.8 µs against
 * 5 µs for JSON.stringify of the same row).
 */
export function encodeRow(values, start = 0, end = values.length) {
  let out = '';
  for (let i = start; i < end; i++) {
    const v = values[i];
    if (v === null || v === undefined) out += '~|';
    else if (typeof v === 'number') out += `n${v}|`;
    else if (v instanceof Uint8Array) out += `b${v.length}:${Buffer.from(v.buffer, v.byteOffset, v.length).toString('hex')}|`;
    else {
      const text = String(v);
      out += `s${text.length}:${text}|`;
    }
  }
  return out;
}

/** SHA-256 (hex) of `<previous hash>\n<id>\n<encoded values>`. */
export function chainHash(prevHash, id, encoded) {
  return hash('sha256', `${prevHash}\n${id}\n${encoded}`, 'hex');
}
