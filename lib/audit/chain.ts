/**
 * Tamper evidence: every row of permission_denials and security_events is chained. A row's `row_hash` is SHA-256 over
 * the previous row's hash and a canonical encoding of the row (its id and every recorded column, in a fixed order);
 * `prev_hash` repeats the previous row's hash. Computed inside the transaction that writes the row: the write lock is
 * taken first, so writers in several processes still form one chain. Changing, removing, reordering or cutting rows
 * breaks the chain at the first affected row (and signed checkpoints catch a cut tail: see checkpoints.ts).
 */
import { hash } from 'node:crypto';
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

/** The canonical encoding of a row's values (the chained columns, in order): JSON of the array. */
export function encodeRow(values: readonly unknown[]): string {
  return JSON.stringify(values);
}

/** SHA-256 (hex) of `<previous hash>\n<id>\n<encoded values>`. */
export function chainHash(prevHash: string, id: number, encoded: string): string {
  return hash('sha256', `${prevHash}\n${id}\n${encoded}`, 'hex');
}

export function rowHash(prevHash: string, id: number, values: readonly unknown[]): string {
  return chainHash(prevHash, id, encodeRow(values));
}

/** The newest row of a chain, or none. A newest row without a hash is a row written before the chain existed. */
export interface ChainHead {
  id: number;
  rowHash: string | null;
}

/**
 * Appends rows to one chained table. Prepared once per connection. The head (last id and hash) is read inside the
 * write transaction; it is kept between appends and read again only when another connection has committed since
 * (`PRAGMA data_version`), which is what keeps the chain one chain with several writing processes.
 */
export class ChainAppender {
  private readonly head: Database.Statement<[], ChainHead>;
  private readonly dataVersion: Database.Statement<[], number>;
  private readonly insert: Database.Statement;
  private readonly appendTx: (encoded: string, values: readonly unknown[]) => number;
  /** the head after this connection's last committed append, and the data_version it was read at */
  private cached: { head: ChainHead; version: number } | undefined;

  constructor(
    private readonly sqlite: Database.Database,
    readonly chain: ChainName,
  ) {
    const columns = CHAIN_COLUMNS[chain];
    this.head = sqlite.prepare(`SELECT id, row_hash AS rowHash FROM ${chain} ORDER BY id DESC LIMIT 1`);
    this.dataVersion = sqlite.prepare<[], number>('PRAGMA data_version').pluck();
    // Positional parameters: this runs once per audit row, and binding by name costs a lookup per column.
    this.insert = sqlite.prepare(
      `INSERT INTO ${chain} (id, ${columns.join(', ')}, prev_hash, row_hash) VALUES (${Array(columns.length + 3).fill('?').join(', ')})`,
    );
    const tx = sqlite.transaction((encoded: string, values: readonly unknown[]) => this.write(encoded, values, true));
    // IMMEDIATE: take the write lock before reading the head, so no other process can append in between.
    this.appendTx = (encoded, values) => tx.immediate(encoded, values);
  }

  private write(encoded: string, values: readonly unknown[], mayUseCache: boolean): number {
    const version = this.dataVersion.get()!;
    const c = this.cached;
    const last = mayUseCache && c && c.version === version ? c.head : this.head.get();
    const id = (last?.id ?? 0) + 1;
    const prev = last?.rowHash ?? GENESIS_HASH;
    const h = chainHash(prev, id, encoded);
    this.insert.run(id, ...values, prev, h);
    this.cached = mayUseCache ? { head: { id, rowHash: h }, version } : undefined;
    return id;
  }

  /** Append one row (values in CHAIN_COLUMNS order) and return its id; committed when this returns. */
  append(values: readonly unknown[]): number {
    // Encoding happens before the write lock is taken; only the hash with the previous row's needs the lock.
    const encoded = encodeRow(values);
    if (this.sqlite.inTransaction) {
      // Inside a caller's transaction (an approval that turns into a denial): that transaction holds the write lock,
      // and may still roll back, so the head is read and not kept.
      return this.write(encoded, values, false);
    }
    try {
      return this.appendTx(encoded, values);
    } catch (error) {
      this.cached = undefined;
      throw error;
    }
  }
}
