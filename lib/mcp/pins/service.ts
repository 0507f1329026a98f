/**
 * The MCP gateway's pins of upstream tool definitions (issue 42: the "rug pull" of tool poisoning). The gateway reports
 * what each upstream lists (`observe`); a tool never seen is pinned as it is (trust on first use, `mcp.tool.pinned`)
 * unless a compliance profile holds new tools (`mcp: { hold_new_tools: true }`, `mcp.tool.held`); a tool whose
 * definition differs from its pin is held (`mcp.tool.changed`, once per pin and definition, with the difference) until
 * an operator accepts the new definition (`mcp.tool.accepted`). The engine refuses a call of a held tool (the source
 * `mcp_pin`, lib/permissions/sources/mcp-pin.ts), so it leaves tools/list and its calls are recorded denials.
 *
 * The pins in force are held in memory (the engine reads them on every decision, synchronously, and they are part of
 * the policy revision) and read again whenever any process changes them: the change feed (PostgreSQL NOTIFY, a commit
 * to the SQLite file) and every few seconds, as the flag overrides are. The same service on both databases.
 *
 * Names that would let a tool speak for another (lib/mcp/names.ts) are reported with the observation and recorded
 * once per server and tool (`mcp.tool.refused`).
 */
import { sql } from 'drizzle-orm';
import type { SqlDatabase, Step, TxRunner, TxSteps } from '@/db/dialect';
import { step } from '@/db/dialect';
import { FeedFollower } from '@/db/feed-follower';
import type { SealCheck } from '@/lib/auth/seal';
import { AUDIT_TRAIL_LOCK } from '@/lib/audit/trail/chain';
import { AppError, isError } from '@/lib/errors';
import type { Role, SecurityEvent } from '@/lib/permissions';
import { changedLines } from './definition';
import { NO_PINS, PINS_CHANNEL, SqlPinStore, type Observed, type ObservedTool, type PinMap, type PinRow } from './store';

/** A name the gateway does not list, and why (lib/mcp/names.ts). */
export interface RefusedName {
  tool: string;
  reason: 'separator' | 'collision' | 'reserved';
  message: string;
}

/** What the application gives the service. */
export interface PinHost {
  readonly database: SqlDatabase;
  readonly check: SealCheck;
  /** writes a security event inside a transaction of the port (the recorder the engine uses) */
  readonly recorder: { recordWithin(t: TxRunner, event: SecurityEvent): Step<unknown> };
  /** the profiles that hold new tools (undefined: first sight pins) */
  holdNewTools(): { profiles: readonly string[] } | undefined;
}

/** Who accepts: a person (or the command line's user) and their role. */
export interface PinActor {
  id: string;
  /** absent for the activator of a revision (change control), whose role is not kept with the activation */
  role?: Role;
}

/** The pins of a policy revision: server id, then tool, to the SHA-256 of its definition. */
export type PinsContent = Record<string, Record<string, string>>;

/** The target of a pin's events: `<server>/<tool>`. */
export const pinTarget = (server: string, tool: string) => `${server}/${tool}`;

/** The pins of a revision (keys sorted), or undefined when none (a revision without MCP pins keeps its old id). */
export function pinsContent(pins: PinMap): PinsContent | undefined {
  if (pins.size === 0) return undefined;
  const out: PinsContent = {};
  for (const server of [...pins.keys()].sort()) {
    const tools = pins.get(server)!;
    out[server] = Object.fromEntries([...tools.keys()].sort().map((t) => [t, tools.get(t)!.sha256]));
  }
  return out;
}

/** Two maps of pins name the same rows. */
function samePins(a: PinMap, b: PinMap): boolean {
  if (a.size !== b.size) return false;
  for (const [server, tools] of a) {
    const other = b.get(server);
    if (!other || other.size !== tools.size) return false;
    for (const [tool, row] of tools) if (other.get(tool)?.id !== row.id) return false;
  }
  return true;
}

function event(type: 'mcp.tool.pinned' | 'mcp.tool.held' | 'mcp.tool.changed' | 'mcp.tool.accepted' | 'mcp.tool.refused', by: PinActor | undefined, target: string, detail: Record<string, unknown>, outcome: 'succeeded' | 'refused' = 'succeeded'): SecurityEvent {
  return { kind: 'config', type, actor: by?.id ?? 'system', actorRole: by?.role, outcome, target, detail };
}

/** The event an observation of one tool records, if any. */
function observedEvent(server: string, o: Observed, holdNew: { profiles: readonly string[] } | undefined, json: string, observer: string | undefined): SecurityEvent | undefined {
  const target = pinTarget(server, o.tool);
  const base = { server, tool: o.tool, sha256: o.sha256, ...(observer ? { observed_by: observer } : {}) };
  if (o.state === 'first_pinned') return event('mcp.tool.pinned', undefined, target, { ...base, accepted_via: 'first_use' });
  if (o.state !== 'held' || !o.row) return undefined;
  if (!o.pinned) return event('mcp.tool.held', undefined, target, { ...base, profiles: holdNew?.profiles ?? [], definition: changedLines(null, json) });
  return event('mcp.tool.changed', undefined, target, { ...base, pinned_sha256: o.pinned.sha256, diff: changedLines(o.pinned.definitionJson, json) });
}

export class McpPins {
  readonly store: SqlPinStore;
  private pins: PinMap;
  private readonly feed = new FeedFollower();
  private loadsStarted = 0;
  private loadApplied = 0;
  /** the refused names this process recorded or found recorded (each is recorded once per server and tool) */
  private readonly refusalsSeen = new Set<string>();

  constructor(
    private readonly host: PinHost,
    initial?: PinMap,
  ) {
    this.store = new SqlPinStore(host.database, host.check);
    this.pins = initial ?? NO_PINS;
  }

  /** The pins in force (the same object until they change). */
  inForce(): PinMap {
    return this.pins;
  }

  /** Load the pins and hear of the changes any process makes (and read them again every few seconds). */
  async start(options: { loaded?: boolean; resyncMs?: number } = {}): Promise<void> {
    if (!options.loaded) await this.reload();
    const reload = () => this.reload();
    await this.feed.start(() => this.host.database.changes(PINS_CHANNEL, () => void reload().catch(() => undefined)), reload, options.resyncMs);
  }

  stop(): Promise<void> {
    return this.feed.stop();
  }

  /** Read the pins again (an older read that ends last never overwrites a newer one). */
  async reload(): Promise<void> {
    const load = ++this.loadsStarted;
    const pins = await this.store.pinsInForce();
    if (load < this.loadApplied) return;
    this.loadApplied = load;
    if (!samePins(pins, this.pins)) this.pins = pins;
  }

  /** Is this definition of this server's tool the pinned one? */
  isPinned(server: string, tool: string, sha256: string): boolean {
    return this.pins.get(server)?.get(tool)?.sha256 === sha256;
  }

  /**
   * What an upstream lists now (its tools with their canonical definitions, and the names the gateway does not list):
   * first sights pinned (or held), changed definitions held, refused names recorded once, each with its event, in one
   * transaction. `observer`: who reported it (the agent of a gateway deciding over REST). Nothing is written when every
   * tool is pinned as it is and every refusal was recorded.
   */
  async observe(server: string, tools: readonly ObservedTool[], refused: readonly RefusedName[] = [], observer?: string): Promise<Observed[]> {
    const known = tools.every((t) => this.isPinned(server, t.name, t.sha256));
    const newRefusals = refused.filter((r) => !this.refusalsSeen.has(pinTarget(server, r.tool)));
    if (known && newRefusals.length === 0) return tools.map((t) => ({ tool: t.name, sha256: t.sha256, state: 'pinned' as const }));
    const holdNew = this.host.holdNewTools();
    const store = this.store;
    const recorder = this.host.recorder;
    const at = Date.now() / 1000;
    const json = new Map(tools.map((t) => [t.name, t.json]));
    const { observed, recorded } = await this.host.database.transaction(
      function* (t): TxSteps<{ observed: Observed[]; recorded: string[] }> {
        const recorded: string[] = [];
        for (const r of newRefusals) {
          const target = pinTarget(server, r.tool);
          const before = yield* t.one<{ id: number }>(sql`SELECT id FROM security_events WHERE type = 'mcp.tool.refused' AND target = ${target} LIMIT 1`);
          if (!before) yield* step(recorder.recordWithin(t, event('mcp.tool.refused', undefined, target, { server, tool: r.tool, reason: r.reason, message: r.message, ...(observer ? { observed_by: observer } : {}) }, 'refused')));
          recorded.push(target);
        }
        const observed = tools.length > 0 ? yield* store.observe(t, server, tools, { holdNew: holdNew !== undefined, at }) : [];
        let changed = false;
        for (const o of observed) {
          const e = observedEvent(server, o, holdNew, json.get(o.tool)!, observer);
          if (e) yield* step(recorder.recordWithin(t, e));
          changed ||= o.state === 'first_pinned' || (o.state === 'held' && o.row !== undefined);
        }
        if (changed) yield* t.publish(PINS_CHANNEL);
        return { observed, recorded };
      },
      { serialise: AUDIT_TRAIL_LOCK },
    );
    for (const r of recorded) this.refusalsSeen.add(r);
    if (observed.some((o) => o.state === 'first_pinned')) await this.reload();
    return observed;
  }

  /**
   * Pin the definition `sha256` of a server's tool, accepted by a person (an operator's review, or an activation of
   * the rules under change control, `via`), with its event (`mcp.tool.accepted`, with the difference), in one
   * transaction. Throws AppError CONFLICT when it is pinned already, NOT_FOUND when the gateway never saw it.
   */
  async accept(p: { server: string; tool: string; sha256: string; reason: string; via: string }, by: PinActor): Promise<{ pin: PinRow; previous: PinRow | null }> {
    const store = this.store;
    const recorder = this.host.recorder;
    const at = Date.now() / 1000;
    const outcome = await this.host.database.transaction(
      function* (t) {
        const r = yield* store.accept(t, { server: p.server, tool: p.tool, sha256: p.sha256, by: by.id, via: p.via, at });
        if ('refused' in r) return r;
        const detail = {
          server: p.server,
          tool: p.tool,
          sha256: p.sha256,
          previous_sha256: r.previous?.sha256 ?? null,
          accepted_via: p.via,
          reason: p.reason,
          diff: changedLines(r.previous?.definitionJson ?? null, r.pin.definitionJson),
        };
        yield* step(recorder.recordWithin(t, event('mcp.tool.accepted', by, pinTarget(p.server, p.tool), detail)));
        yield* t.publish(PINS_CHANNEL);
        return r;
      },
      { serialise: AUDIT_TRAIL_LOCK },
    );
    if ('refused' in outcome) {
      throw outcome.refused === 'pinned'
        ? new AppError('CONFLICT', `The definition ${p.sha256.slice(0, 12)}… of "${p.tool}" on server "${p.server}" is the pinned one already.`)
        : new AppError('NOT_FOUND', `The gateway never saw a definition ${p.sha256.slice(0, 12)}… of "${p.tool}" on server "${p.server}": see npx swarm mcp pins for the held ones.`);
    }
    await this.reload();
    return outcome;
  }

  /**
   * The pins of an activated revision (change control), put in force: each pin of `content` that differs from the one
   * in force is accepted as by `by` (`via`: the proposal). Idempotent (every process of every server does it, the first
   * writes); a definition this database never saw is skipped and returned.
   */
  async applyRevision(content: PinsContent | undefined, by: PinActor, via: string): Promise<{ applied: string[]; unknown: string[] }> {
    const applied: string[] = [];
    const unknown: string[] = [];
    for (const [server, tools] of Object.entries(content ?? {})) {
      for (const [tool, sha256] of Object.entries(tools)) {
        if (this.isPinned(server, tool, sha256)) continue;
        try {
          await this.accept({ server, tool, sha256, reason: `activated with ${via}`, via }, by);
          applied.push(pinTarget(server, tool));
        } catch (error) {
          if (isError(error, AppError) && error.code === 'NOT_FOUND') unknown.push(pinTarget(server, tool));
          else if (!(isError(error, AppError) && error.code === 'CONFLICT')) throw error;
        }
      }
    }
    if (applied.length === 0 && unknown.length === 0) await this.reload();
    return { applied, unknown };
  }
}
