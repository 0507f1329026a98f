/**
 * The uses of the MCP pins by people (issue 42): what is pinned and what is held (with the difference), and the
 * acceptance of a held definition by an operator. Without change control an acceptance pins the definition at once
 * (`mcp.tool.accepted`); under change control (a compliance profile with `change_control`) the pins are part of the
 * rules, so an acceptance is a proposal like a rule change (its revision holds the new pin), and the pin is put in
 * force when the proposal is activated (lib/change-control/service.ts applies the pins of every activation).
 */
import type { App } from '@/lib/app';
import type { Actor } from '@/lib/change-control/service';
import type { Proposal } from '@/lib/change-control/store';
import { AppError } from '@/lib/errors';
import { readableDefinition } from './definition';
import { pinsContent } from './service';
import type { PinRow } from './store';

export interface AcceptInput {
  server: string;
  tool: string;
  /** the SHA-256 of the definition reviewed: the one accepted, whatever the upstream lists meanwhile */
  sha256: string;
  /** why it is accepted (kept in the trail) */
  reason: string;
}

export type Acceptance = { status: 'accepted'; pin: PinRow; previous: PinRow | null } | { status: 'proposed'; proposal: Proposal };

/** A pin as the API, the console and the command line show it. */
export function pinJson(r: PinRow) {
  return { server: r.serverId, tool: r.toolName, sha256: r.sha256, accepted_by: r.acceptedBy, accepted_via: r.acceptedVia, accepted_at: r.at };
}

/** Every pin in force and every held definition, each held one with the pinned definition it differs from. */
export async function pinListing(app: App) {
  const { pins, held } = await app.mcpPins.store.listing();
  const enforced = app.changeControl.enforced;
  const open = enforced ? await app.changeControl.store.proposals({ status: 'open' }) : [];
  return {
    /** acceptance goes through a proposal (change control) */
    change_control: enforced,
    /** the profiles that hold new tools (empty: a tool first seen is pinned as it is) */
    hold_new_tools: [...(app.profiles.holdNewMcpTools?.profiles ?? [])],
    pins: pins.map(pinJson),
    held: held.map(({ row, pinned }) => ({
      server: row.serverId,
      tool: row.toolName,
      sha256: row.sha256,
      seen_at: row.at,
      pinned_sha256: pinned?.sha256 ?? null,
      definition: readableDefinition(row.definitionJson),
      pinned_definition: pinned ? readableDefinition(pinned.definitionJson) : null,
      /** under change control: the open proposal that would accept it, if one was made */
      proposal: open.find((p) => p.message.includes(acceptanceMark(row.serverId, row.toolName, row.sha256)))?.id ?? null,
    })),
  };
}

export type PinListing = Awaited<ReturnType<typeof pinListing>>;

/** What a proposal to accept a definition says in its message, to be found again (`[mcp-pin server/tool sha256]`). */
function acceptanceMark(server: string, tool: string, sha256: string): string {
  return `[mcp-pin ${server}/${tool} ${sha256}]`;
}

/**
 * An operator accepts the definition `sha256` of a server's tool: pinned at once, or (change control) proposed. Throws
 * AppError NOT_FOUND when the gateway never saw that definition, CONFLICT when it is the pinned one already.
 */
export async function acceptToolDefinition(app: App, input: AcceptInput, by: Actor): Promise<Acceptance> {
  const reason = input.reason.trim();
  if (!reason) throw new AppError('BAD_REQUEST', 'An acceptance needs a reason: it is kept in the trail.');
  if (!app.changeControl.enforced) {
    const { pin, previous } = await app.mcpPins.accept({ ...input, reason, via: 'operator' }, by);
    return { status: 'accepted', pin, previous };
  }
  const rows = await app.mcpPins.store.history(input.server, input.tool);
  if (rows.find((r) => r.state === 'accepted')?.sha256 === input.sha256) {
    throw new AppError('CONFLICT', `The definition ${input.sha256.slice(0, 12)}… of "${input.tool}" on server "${input.server}" is the pinned one already.`);
  }
  if (!rows.some((r) => r.sha256 === input.sha256)) {
    throw new AppError('NOT_FOUND', `The gateway never saw a definition ${input.sha256.slice(0, 12)}… of "${input.tool}" on server "${input.server}": see npx swarm mcp pins for the held ones.`);
  }
  const pins = pinsContent(app.mcpPins.inForce()) ?? {};
  const proposed = { ...pins, [input.server]: { ...pins[input.server], [input.tool]: input.sha256 } };
  const message = `Accept the new definition of the MCP tool "${input.tool}" of server "${input.server}" (sha256 ${input.sha256.slice(0, 12)}…): ${reason} ${acceptanceMark(input.server, input.tool, input.sha256)}`;
  const proposal = await app.changeControl.propose({ texts: app.ruleTexts(), message, by, mcpPins: proposed });
  return { status: 'proposed', proposal };
}
