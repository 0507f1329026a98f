/**
 * Tamper evidence: every row of permission_denials and security_events is chained. A row's `row_hash` is SHA-256 over
 * the previous row's hash and a canonical encoding of the row (its id and every recorded column, in a fixed order);
 * `prev_hash` repeats the previous row's hash. Computed inside the transaction that writes the row: the write lock is
 * taken first, so writers in several processes still form one chain. Changing, removing, reordering or cutting rows
 * breaks the chain at the first affected row (and signed checkpoints catch a cut tail: see checkpoints.ts).
 */
import type Database from 'better-sqlite3';
// The canonical encoding and the hash live in plain JavaScript, shared with the verifier's worker threads.
import { announceWrite } from '@/db/write-intent';
import { chainHash, encodeRow } from './chain-encoding.mjs';

export { chainHash, encodeRow };

/**
 * The key the audit trail's writers serialise on (SqlDatabase.transaction's `serialise`: an advisory lock on
 * PostgreSQL, where several servers append; SQLite's writer lock already does it): the appends to both chains, the
 * signing of checkpoints and the removal of an archived prefix take turns on it. The number earlier releases locked
 * (their chain append): servers of two releases never append at once during a rolling upgrade.
 */
export const AUDIT_TRAIL_LOCK = 7_318_221_905_002;

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

export function rowHash(prevHash: string, id: number, values: readonly unknown[]): string {
  return chainHash(prevHash, id, encodeRow(values));
}

/** The newest row of a chain (or where an archive left it), as the next row must follow it. */
export interface Head {
  id: number;
  hash: string;
}

const MAX_RACES = 20;

/**
 * Appends rows to one chained table, one autocommit INSERT per row with its id and its predecessor's hash given. The
 * head (newest id and hash) is kept between appends; another process that appended meanwhile has taken the id, so the
 * INSERT fails on the primary key, and the head is read again and the row retried. Ids are dense, so a row that
 * inserts at `head + 1` really follows `head`: writers in several processes still form one chain. (Measured: an
 * explicit BEGIN IMMEDIATE, a SELECT of the head and COMMIT around each row cost a third more.)
 */
export class ChainAppender {
  private readonly newest: Database.Statement<[], { id: number; hash: string | null }>;
  private readonly archived: Database.Statement<[string], Head>;
  private readonly insert: Database.Statement;
  private head: Head | undefined;

  constructor(
    private readonly sqlite: Database.Database,
    readonly chain: ChainName,
  ) {
    const columns = CHAIN_COLUMNS[chain];
    this.newest = sqlite.prepare(`SELECT id, row_hash AS hash FROM ${chain} ORDER BY id DESC LIMIT 1`);
    this.archived = sqlite.prepare('SELECT up_to_id AS id, head_hash AS hash FROM audit_archives WHERE chain = ? ORDER BY up_to_id DESC LIMIT 1');
    // Positional parameters: this runs once per audit row, and binding by name costs a lookup per column.
    this.insert = sqlite.prepare(
      `INSERT INTO ${chain} (id, ${columns.join(', ')}, prev_hash, row_hash) VALUES (${Array(columns.length + 3).fill('?').join(', ')})`,
    );
  }

  /** The head as the database has it: the newest row, or where an archive of every row left the chain. */
  private readHead(): Head {
    const row = this.newest.get();
    if (row) return { id: row.id, hash: row.hash ?? GENESIS_HASH };
    return this.archived.get(this.chain) ?? { id: 0, hash: GENESIS_HASH };
  }

  /** Append one row (values in CHAIN_COLUMNS order) and return its id; committed when this returns (or with the caller's transaction). */
  append(values: readonly unknown[]): number {
    announceWrite(this.sqlite);
    const encoded = encodeRow(values);
    // Inside a caller's transaction (an approval that turns into a denial) the row may still be rolled back: the head is
    // read, and not kept.
    const inCallerTx = this.sqlite.inTransaction;
    let head = inCallerTx ? this.readHead() : (this.head ?? this.readHead());
    for (let attempt = 0; ; attempt++) {
      const id = head.id + 1;
      const hash = chainHash(head.hash, id, encoded);
      try {
        this.insert.run(id, ...values, head.hash, hash);
        this.head = inCallerTx ? undefined : { id, hash };
        return id;
      } catch (error) {
        this.head = undefined;
        const taken = (error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
        if (!taken || attempt >= MAX_RACES) throw error;
        head = this.readHead();
      }
    }
  }
}
