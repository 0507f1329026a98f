/**
 * Tamper evidence: every row of permission_denials and security_events is chained. A row's `row_hash` is SHA-256 over
 * the previous row's hash and a canonical encoding of the row (its id and every recorded column, in a fixed order);
 * `prev_hash` repeats the previous row's hash. Computed inside the transaction that writes the row: the write lock is
 * taken first, so writers in several processes still form one chain. Changing, removing, reordering or cutting rows
 * breaks the chain at the first affected row (and signed checkpoints catch a cut tail: see checkpoints.ts).
 */
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';

/** The hash before the first chained row. */
export const GENESIS_HASH = '0'.repeat(64);

/** The chained columns of each table, in the order they are encoded (the id comes first, then these). */
export const CHAIN_COLUMNS = {
  permission_denials: [
    'tool_call_id',
    'tool_name',
    'agent_name',
    'arguments_json',
    'rule_source',
    'reason',
    'user_role',
    'http_method',
    'http_path',
    'timestamp',
    'principal',
    'trace_json',
    'decision_id',
    'policy_revision',
    'masked_paths',
  ],
  security_events: ['decision_id', 'type', 'actor', 'actor_role', 'outcome', 'target', 'detail_json', 'policy_revision', 'ip', 'timestamp'],
} as const;

export type ChainName = keyof typeof CHAIN_COLUMNS;
export const CHAIN_NAMES = Object.keys(CHAIN_COLUMNS) as ChainName[];

/** SHA-256 of the previous hash and the canonical encoding of the row: JSON of [id, ...values]. */
export function rowHash(prevHash: string, id: number, values: readonly unknown[]): string {
  return createHash('sha256').update(prevHash).update('\n').update(JSON.stringify([id, ...values])).digest('hex');
}

/** The newest row of a chain, or none. A newest row without a hash is a row written before the chain existed. */
export interface ChainHead {
  id: number;
  rowHash: string | null;
}

/** Appends rows to one chained table. Prepared once per connection. */
export class ChainAppender {
  private readonly head: Database.Statement<[], ChainHead>;
  private readonly insert: Database.Statement;
  private readonly appendTx: (values: readonly unknown[], ids: { id: number }) => void;

  constructor(
    private readonly sqlite: Database.Database,
    readonly chain: ChainName,
  ) {
    const columns = CHAIN_COLUMNS[chain];
    this.head = sqlite.prepare(`SELECT id, row_hash AS rowHash FROM ${chain} ORDER BY id DESC LIMIT 1`);
    // Positional parameters: this runs once per audit row, and binding by name costs a lookup per column.
    this.insert = sqlite.prepare(
      `INSERT INTO ${chain} (id, ${columns.join(', ')}, prev_hash, row_hash) VALUES (${Array(columns.length + 3).fill('?').join(', ')})`,
    );
    const tx = sqlite.transaction((values: readonly unknown[], out: { id: number }) => {
      const last = this.head.get();
      const id = (last?.id ?? 0) + 1;
      const prev = last?.rowHash ?? GENESIS_HASH;
      this.insert.run(id, ...values, prev, rowHash(prev, id, values));
      out.id = id;
    });
    // IMMEDIATE: take the write lock before reading the head, so no other process can append in between.
    this.appendTx = (values, out) => tx.immediate(values, out);
  }

  /** Append one row (values in CHAIN_COLUMNS order) and return its id; committed when this returns. */
  append(values: readonly unknown[]): number {
    const out = { id: 0 };
    if (this.sqlite.inTransaction) {
      // Inside a caller's transaction (an approval that turns into a denial): that transaction holds the write lock.
      const last = this.head.get();
      const id = (last?.id ?? 0) + 1;
      const prev = last?.rowHash ?? GENESIS_HASH;
      this.insert.run(id, ...values, prev, rowHash(prev, id, values));
      return id;
    }
    this.appendTx(values, out);
    return out.id;
  }
}
