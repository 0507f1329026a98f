/**
 * Where the MCP gateway's pins are kept (mcp_tool_pins, issue 42): one implementation for SQLite and PostgreSQL over the
 * dialect port. The table is append-only; what a row means is read from the rows in order:
 *
 * - the pin of a server's tool is its newest `accepted` row (a first sight, an operator's acceptance, an activation of
 *   the rules under change control);
 * - a definition is held when a `held` row of it is newer than the pin and differs from it: seen, not yet reviewed.
 *
 * A row counts only when its seal verifies (lib/auth/seal.ts: its id, the tool, the hash, the state and who accepted it
 * how and when, under the installation's key) and its definition still hashes to its `sha256`: a row written or edited
 * with the database file alone is passed over, and recorded once (`auth.unverified`). Ids are given here (the newest
 * plus one, inside a transaction that holds the audit trail's lock), so that the seal covers the row's place in order:
 * an old acceptance copied under a newer id is no pin.
 *
 * The writes are transaction steps (`observe`, `accept`): the service (service.ts) records their events in the same
 * transaction, so that a pin and its event commit together or not at all.
 */
import { sql } from 'drizzle-orm';
import type { SqlDatabase, TxRunner, TxSteps } from '@/db/dialect';
import { pinSealed, type SealCheck } from '@/lib/auth/seal';
import { sha256Of } from './definition';

/** The channel every process hears a pin change on (PostgreSQL NOTIFY; on SQLite, any commit to the file). */
export const PINS_CHANNEL = 'swarm_mcp_pins';

export type PinState = 'accepted' | 'held';

/** One row, as read. */
export interface PinRow {
  id: number;
  serverId: string;
  toolName: string;
  sha256: string;
  definitionJson: string;
  state: PinState;
  acceptedBy: string | null;
  acceptedVia: string | null;
  at: number;
  mac: string | null;
}

/** The pins in force: server id, then the upstream's own tool name, to its pinned row. */
export type PinMap = ReadonlyMap<string, ReadonlyMap<string, PinRow>>;

export const NO_PINS: PinMap = new Map();

/** A definition held for an operator, with the pin it differs from (null: a new tool a profile holds). */
export interface HeldDefinition {
  row: PinRow;
  pinned: PinRow | null;
}

/** What an observation found for one tool. */
export type Observed =
  /** its definition is the pinned one */
  | { tool: string; sha256: string; state: 'pinned' }
  /** first sight, pinned as it is now (`row`: the new pin) */
  | { tool: string; sha256: string; state: 'first_pinned'; row: PinRow }
  /** held: it differs from its pin, or it is new and a profile holds new tools; `row` is set when this observation wrote it */
  | { tool: string; sha256: string; state: 'held'; pinned: PinRow | null; row?: PinRow };

export interface ObservedTool {
  name: string;
  /** canonical definition JSON (lib/mcp/pins/definition.ts) */
  json: string;
  sha256: string;
}

const COLUMNS = sql`id, server_id AS "serverId", tool_name AS "toolName", sha256, definition_json AS "definitionJson", state,
  accepted_by AS "acceptedBy", accepted_via AS "acceptedVia", at, mac`;

/** A row as either database answers it (PostgreSQL's bigint as text, its double precision as a number). */
const rowOf = (r: PinRow): PinRow => ({ ...r, id: Number(r.id), at: Number(r.at) });

/** The row counts: sealed, and its definition still hashes to it (else told to `check` once, and passed over). */
export function verifiedPin(check: SealCheck, r: PinRow): boolean {
  if (!pinSealed(check, r)) return false;
  if (sha256Of(r.definitionJson) === r.sha256) return true;
  check.unverified('mcp_tool_pins', String(r.id), `the definition kept with pin ${r.id} of MCP tool "${r.toolName}" (it no longer hashes to its sha256)`);
  return false;
}

/** The pins in force of these rows (any order): the newest verified accepted row of each server's tool. */
export function pinsOf(rows: readonly PinRow[], check: SealCheck): Map<string, Map<string, PinRow>> {
  const out = new Map<string, Map<string, PinRow>>();
  for (const r of [...rows].sort((a, b) => b.id - a.id)) {
    if (r.state !== 'accepted' || out.get(r.serverId)?.has(r.toolName)) continue;
    if (!verifiedPin(check, r)) continue;
    let tools = out.get(r.serverId);
    if (!tools) out.set(r.serverId, (tools = new Map()));
    tools.set(r.toolName, r);
  }
  return out;
}

/** Every accepted row (what the pins in force are read from, by every process at start and after each change). */
export const ACCEPTED_QUERY = sql`SELECT ${COLUMNS} FROM mcp_tool_pins WHERE state = 'accepted'`;

/** The newest verified row of a tool of this list (rows newest first) that satisfies `test`. */
function newest(rows: readonly PinRow[], check: SealCheck, tool: string, test: (r: PinRow) => boolean): PinRow | undefined {
  for (const r of rows) if (r.toolName === tool && test(r) && verifiedPin(check, r)) return r;
  return undefined;
}

export class SqlPinStore {
  constructor(
    readonly db: SqlDatabase,
    private readonly check: SealCheck,
  ) {}

  async pinsInForce(): Promise<Map<string, Map<string, PinRow>>> {
    return pinsOf((await this.db.all<PinRow>(ACCEPTED_QUERY)).map(rowOf), this.check);
  }

  /** Every pin in force, and every definition held for an operator with the pin it differs from. */
  async listing(): Promise<{ pins: PinRow[]; held: HeldDefinition[] }> {
    const rows = (await this.db.all<PinRow>(sql`SELECT ${COLUMNS} FROM mcp_tool_pins ORDER BY id DESC`)).map(rowOf);
    const pins = pinsOf(rows, this.check);
    const held: HeldDefinition[] = [];
    const seen = new Set<string>();
    for (const r of rows) {
      if (r.state !== 'held') continue;
      const pinned = pins.get(r.serverId)?.get(r.toolName) ?? null;
      const key = JSON.stringify([r.serverId, r.toolName, r.sha256]);
      if (seen.has(key) || (pinned && (r.id < pinned.id || r.sha256 === pinned.sha256))) continue;
      if (!verifiedPin(this.check, r)) continue;
      seen.add(key);
      held.push({ row: r, pinned });
    }
    return { pins: [...pins.values()].flatMap((tools) => [...tools.values()]).sort((a, b) => a.serverId.localeCompare(b.serverId) || a.toolName.localeCompare(b.toolName)), held };
  }

  /** The verified rows of one server's tool, newest first (its history). */
  async history(server: string, tool: string): Promise<PinRow[]> {
    const rows = (await this.db.all<PinRow>(sql`SELECT ${COLUMNS} FROM mcp_tool_pins WHERE server_id = ${server} AND tool_name = ${tool} ORDER BY id DESC`)).map(rowOf);
    return rows.filter((r) => verifiedPin(this.check, r));
  }

  /** The rows of a server, newest first (inside a transaction). */
  private *rowsOf(t: TxRunner, server: string): TxSteps<PinRow[]> {
    return (yield* t.all<PinRow>(sql`SELECT ${COLUMNS} FROM mcp_tool_pins WHERE server_id = ${server} ORDER BY id DESC`)).map(rowOf);
  }

  private *nextId(t: TxRunner): TxSteps<number> {
    const next = yield* t.one<{ next: number | string }>(sql`SELECT coalesce(max(id), 0) + 1 AS "next" FROM mcp_tool_pins`);
    return Number(next!.next);
  }

  private *insert(t: TxRunner, id: number, r: Omit<PinRow, 'id' | 'mac'>): TxSteps<PinRow> {
    const row: PinRow = { ...r, id, mac: this.check.seal().pin({ ...r, id }) };
    yield* t.run(sql`INSERT INTO mcp_tool_pins (id, server_id, tool_name, sha256, definition_json, state, accepted_by, accepted_via, at, mac)
      VALUES (${row.id}, ${row.serverId}, ${row.toolName}, ${row.sha256}, ${row.definitionJson}, ${row.state}, ${row.acceptedBy}, ${row.acceptedVia}, ${row.at}, ${row.mac})`);
    return row;
  }

  /**
   * What an upstream lists now, against the pins (inside a transaction that holds the audit trail's lock): a tool never
   * seen is pinned as it is (or held, `holdNew`); a definition that differs from its pin is held, once per pin and
   * definition.
   */
  *observe(t: TxRunner, server: string, tools: readonly ObservedTool[], options: { holdNew: boolean; at: number }): TxSteps<Observed[]> {
    const rows = yield* this.rowsOf(t, server);
    let id: number | undefined;
    const nextId = function* (this: SqlPinStore): TxSteps<number> {
      id = id === undefined ? yield* this.nextId(t) : id + 1;
      return id;
    }.bind(this);
    const out: Observed[] = [];
    for (const tool of tools) {
      const pin = newest(rows, this.check, tool.name, (r) => r.state === 'accepted');
      if (pin && pin.sha256 === tool.sha256) {
        out.push({ tool: tool.name, sha256: tool.sha256, state: 'pinned' });
        continue;
      }
      const base = { serverId: server, toolName: tool.name, sha256: tool.sha256, definitionJson: tool.json, at: options.at };
      if (!pin && !options.holdNew) {
        const row = yield* this.insert(t, yield* nextId(), { ...base, state: 'accepted', acceptedBy: 'system', acceptedVia: 'first_use' });
        rows.unshift(row);
        out.push({ tool: tool.name, sha256: tool.sha256, state: 'first_pinned', row });
        continue;
      }
      // Held once per pin and definition: a held row of it newer than the pin says it was seen (and recorded) already.
      const heldAlready = newest(rows, this.check, tool.name, (r) => r.state === 'held' && r.sha256 === tool.sha256 && r.id > (pin?.id ?? 0));
      if (heldAlready) {
        out.push({ tool: tool.name, sha256: tool.sha256, state: 'held', pinned: pin ?? null });
        continue;
      }
      const row = yield* this.insert(t, yield* nextId(), { ...base, state: 'held', acceptedBy: null, acceptedVia: null });
      rows.unshift(row);
      out.push({ tool: tool.name, sha256: tool.sha256, state: 'held', pinned: pin ?? null, row });
    }
    return out;
  }

  /**
   * Pin the definition of `sha256` of a server's tool (inside a transaction that holds the audit trail's lock): one the
   * gateway saw (a held row) or pinned before. Returns the new pin and the one it replaces, or why it cannot be: the
   * definition is pinned already, or none with this hash was ever seen.
   */
  *accept(
    t: TxRunner,
    p: { server: string; tool: string; sha256: string; by: string; via: string; at: number },
  ): TxSteps<{ pin: PinRow; previous: PinRow | null } | { refused: 'pinned' | 'unknown' }> {
    const rows = (yield* this.rowsOf(t, p.server)).filter((r) => r.toolName === p.tool);
    const previous = newest(rows, this.check, p.tool, (r) => r.state === 'accepted') ?? null;
    if (previous?.sha256 === p.sha256) return { refused: 'pinned' };
    const seen = newest(rows, this.check, p.tool, (r) => r.sha256 === p.sha256);
    if (!seen) return { refused: 'unknown' };
    const pin = yield* this.insert(t, yield* this.nextId(t), {
      serverId: p.server,
      toolName: p.tool,
      sha256: p.sha256,
      definitionJson: seen.definitionJson,
      state: 'accepted',
      acceptedBy: p.by,
      acceptedVia: p.via,
      at: p.at,
    });
    return { pin, previous };
  }
}
