/**
 * A flag change as the API and the CLI make it: the override is set or removed, and the change, or the refusal (an
 * invariant cannot be turned off, a profile's locked flag cannot be changed), is in the flag history and a security event in the audit trail, attributed to the person who asked.
 */
import type { App } from '@/lib/app';
import { AppError } from '@/lib/errors';
import type { Principal } from '@/lib/permissions';
import type { ResolvedFlag } from './resolve';

export interface FlagChange {
  name: string;
  /** the new override, or null to remove the override */
  value: boolean | null;
  reason: string;
}

export async function changeFlag(app: App, change: FlagChange, by: Principal, ip?: string): Promise<ResolvedFlag> {
  const before = app.flags.resolution().flags.get(change.name)?.value ?? null;
  const event = { kind: 'config' as const, actor: by.id, actorRole: by.role, target: change.name, ip: ip ?? null };
  let flag: ResolvedFlag;
  try {
    flag = await (change.value === null ? app.flags.unsetOverride(change.name, by.id, change.reason) : app.flags.setOverride(change.name, change.value, by.id, change.reason));
  } catch (error) {
    if (error instanceof AppError && error.code === 'INVARIANT') {
      await app.recorder.record({ ...event, type: 'flag.refused', outcome: 'refused', detail: { requested: change.value, reason: change.reason, refusal: error.message } });
      await app.flags.recordRefusal(change.name, change.value, by.id, change.reason, error.message);
    }
    throw error;
  }
  await app.recorder.record({
    ...event,
    type: 'flag.changed',
    outcome: 'succeeded',
    detail: { action: change.value === null ? 'unset' : 'set', old_value: before, new_value: flag.value, layer: flag.layer, reason: change.reason },
  });
  return flag;
}
