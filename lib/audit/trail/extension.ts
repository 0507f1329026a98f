/**
 * Whether a chain as the database has it now extends a head signed before: the row at the old size still carries the
 * old hash, and every row after it, up to the new head, chains on from it. A signer checks this before it signs a new
 * head (Checkpointer), so a trail rewritten behind its last checkpoint, or rolled back to an older copy,
 * is never signed again with the genuine key; a witness server checks the same on the rows it is sent.
 */
import { CHAIN_COLUMNS, chainHash, encodeRow, type ChainName } from './chain';
import type { WitnessedCheckpoint } from './witness';

export type SignedHead = Pick<WitnessedCheckpoint, 'size' | 'headHash'>;

/** A row of a chain ([id, ...chained columns, prev_hash, row_hash]) as a witness server checks it: [id, encoded row, row_hash]. */
export function witnessRow(chain: ChainName, row: readonly unknown[]): [number, string, string] {
  const last = CHAIN_COLUMNS[chain].length + 1;
  return [row[0] as number, encodeRow(row, 1, last), row[last + 1] as string];
}

/** The newest (largest) of several heads known to have been signed; undefined when none is known. */
export function newestHead<T extends SignedHead>(heads: readonly (T | undefined)[]): T | undefined {
  let out: T | undefined;
  for (const h of heads) if (h && (!out || h.size > out.size)) out = h;
  return out;
}

/**
 * Walks the rows after a signed head, in id order ([id, ...chained columns, prev_hash, row_hash], as the verifier reads
 * them), and says what, if anything, keeps the chain from extending that head.
 */
export class ExtensionCheck {
  private expectedId: number;
  private expectedPrev: string;
  private problem: string | undefined;
  private readonly last: number;

  /**
   * `hashAtSize`: the row_hash the database now has at the signed size (null: that row is gone; 'archived': it left
   * through an archive, whose signed record verification checks).
   */
  constructor(
    readonly chain: ChainName,
    readonly from: SignedHead,
    hashAtSize: string | null | 'archived',
    readonly to: { id: number },
  ) {
    this.last = CHAIN_COLUMNS[chain].length + 1;
    this.expectedId = from.size + 1;
    this.expectedPrev = from.headHash;
    if (to.id < from.size) this.problem = `the chain ends at row ${to.id}, before the head signed last (row ${from.size}): it was cut or rolled back`;
    else if (hashAtSize === null) this.problem = `row ${from.size}, the head signed last, is missing`;
    else if (hashAtSize !== 'archived' && hashAtSize !== from.headHash) this.problem = `row ${from.size} no longer has the hash signed last: the trail was rewritten at or before it`;
  }

  /** false once a problem is found (the caller may stop reading). */
  add(row: readonly unknown[]): boolean {
    if (this.problem) return false;
    const id = row[0] as number;
    if (id > this.to.id) return true;
    const prev = row[this.last] as string | null;
    const stored = row[this.last + 1] as string | null;
    if (id !== this.expectedId) this.problem = `row ${this.expectedId} is missing after the head signed last`;
    else if (prev !== this.expectedPrev || stored === null || chainHash(this.expectedPrev, id, encodeRow(row, 1, this.last)) !== stored) {
      this.problem = `row ${id} does not follow on from the head signed last`;
    } else {
      this.expectedPrev = stored;
      this.expectedId = id + 1;
    }
    return this.problem === undefined;
  }

  /** undefined when the chain extends the signed head up to `to`; else what is wrong. */
  result(): string | undefined {
    if (this.problem) return this.problem;
    if (this.expectedId !== this.to.id + 1) return `row ${this.expectedId} is missing after the head signed last`;
    return undefined;
  }
}
