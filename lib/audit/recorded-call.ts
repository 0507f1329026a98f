/**
 * A recorded call read back from its row, as explain (lib/audit/explain.ts) and the impact of a proposed configuration
 * (lib/audit/impact.ts) re-run it: who made it, and its arguments.
 */
import type { DenialRow, SecurityEventRow } from '@/db/schema';
import { isRole, type Principal, type Role } from '@/lib/permissions';

const roleOf = (r: string | null | undefined): Role => (isRole(r) ? r : 'anonymous');

/** Who made a recorded denial's call: the agent of an agent token, else the user (or nobody), with the recorded role. */
export function denialPrincipal(d: Pick<DenialRow, 'principal' | 'agentName' | 'userRole'>): Principal {
  if (d.principal !== null && d.principal === d.agentName) return { kind: 'agent', id: d.principal, role: roleOf(d.userRole), agent: d.principal };
  return { kind: d.principal === 'anonymous' ? 'anonymous' : 'user', id: d.principal ?? 'anonymous', role: roleOf(d.userRole) };
}

/** Who made a recorded decision event's call (actor `agent:NAME` for an agent token). */
export function eventPrincipal(e: Pick<SecurityEventRow, 'actor' | 'actorRole'>): Principal {
  const agent = e.actor.startsWith('agent:') ? e.actor.slice('agent:'.length) : undefined;
  return agent ? { kind: 'agent', id: agent, role: roleOf(e.actorRole), agent } : { kind: 'user', id: e.actor, role: roleOf(e.actorRole) };
}

/** A recorded call's arguments (a note says when they are truncated or not JSON). */
export function parseArgs(json: string | null, notes: string[]): Record<string, unknown> {
  if (!json) return {};
  try {
    const v = JSON.parse(json) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      if ('[truncated]' in v) notes.push('The arguments were too large and are kept truncated: the re-run sees only what was kept.');
      return v as Record<string, unknown>;
    }
  } catch {
    notes.push('The recorded arguments are not valid JSON.');
  }
  return {};
}
