/**
 * A flag change as the API and the CLI make it: the override is set or removed, and the change, or the refusal (an
 * invariant cannot be changed, a profile's locked flag cannot be changed, a role below admin cannot change a flag), is
 * in the flag history and a security event in the audit trail, attributed to the person who asked. The history row and
 * the event are written in one transaction, before the answer: both are there, or the change is not made (nor answered).
 */
import { step } from '@/db/dialect';
import type { App } from '@/lib/app';
import { AppError, isError } from '@/lib/errors';
import type { Principal, SecurityEvent } from '@/lib/permissions';
import type { ResolvedFlag } from './resolve';
import type { AlsoWithin } from './store';

export interface FlagChange {
  name: string;
  /** the new override, or null to remove the override */
  value: boolean | null;
  reason: string;
}

/** Writes the event in the transaction it is given, on the recorder of either database. */
function recording(app: App, event: SecurityEvent): AlsoWithin {
  return function* (tx) {
    yield* step(app.recorder.recordWithin(tx, event));
  };
}

function eventBase(change: FlagChange, by: Principal, ip: string | undefined) {
  return { kind: 'config' as const, actor: by.id, actorRole: by.role, target: change.name, ip: ip ?? null };
}

export async function changeFlag(app: App, change: FlagChange, by: Principal, ip?: string): Promise<ResolvedFlag> {
  const before = app.flags.resolution().flags.get(change.name)?.value ?? null;
  const event = eventBase(change, by, ip);
  const changed = (after: ResolvedFlag): SecurityEvent => ({
    ...event,
    type: 'flag.changed',
    outcome: 'succeeded',
    detail: { action: change.value === null ? 'unset' : 'set', old_value: before, new_value: after.value, layer: after.layer, reason: change.reason },
  });
  try {
    return await (change.value === null
      ? app.flags.unsetOverride(change.name, by.id, change.reason, (tx, after) => recording(app, changed(after))(tx))
      : app.flags.setOverride(change.name, change.value, by.id, change.reason, (tx, after) => recording(app, changed(after))(tx)));
  } catch (error) {
    if (isError(error, AppError) && error.code === 'INVARIANT') await recordRefusal(app, change, by, ip, error.message);
    throw error;
  }
}

/**
 * A flag change refused before it was tried (the route's role check: a person below admin) or by the flag's own rules
 * (an invariant, a lock): in the flag history and as `flag.refused`, in one transaction.
 */
export function recordRefusal(app: App, change: FlagChange, by: Principal, ip: string | undefined, refusal: string): Promise<void> {
  const event: SecurityEvent = {
    ...eventBase(change, by, ip),
    type: 'flag.refused',
    outcome: 'refused',
    detail: { requested: change.value, reason: change.reason, refusal },
  };
  return app.flags.recordRefusal(change.name, change.value, by.id, change.reason, refusal, recording(app, event));
}
