/**
 * The evidence of each control of the active compliance profiles, for the report's period: each evidence kind a
 * control names (profile.yaml `evidence:`) becomes one sentence with its figure, computed from the report's data,
 * and each rule, gate, flag, invariant or setting that serves the control is checked to be in force now.
 */
import type { App } from '@/lib/app';
import type { ControlMapping, EvidenceKind, LoadedProfile } from '@/lib/profiles/profile';
import type { ReportData } from './data';
import { isoSeconds } from './period';

export const int = (n: number): string => Math.round(n).toLocaleString('en-US');
export const plural = (n: number, one: string, many = `${one}s`): string => `${int(n)} ${n === 1 ? one : many}`;

/** One line of evidence for one kind over the report's period. */
export function evidenceFor(kind: EvidenceKind, d: ReportData): string {
  switch (kind) {
    case 'denials': {
      const fams = d.denials.families.slice(0, 3).map((f) => `${f.value} ${int(f.count)}`).join(', ');
      return `${plural(d.denials.total, 'denial')} recorded, each attributed to its rule${fams ? ` (${fams}${d.denials.families.length > 3 ? ', …' : ''})` : ''}`;
    }
    case 'decisions_logged':
      return d.scope.decisionLogAll
        ? `${plural(d.decisions.total, 'decision')} logged: ${int(d.decisions.allowed)} allowed, ${int(d.decisions.asked)} asked, ${int(d.decisions.denied)} denied`
        : `${plural(d.decisions.denied, 'denial')} logged; allowed decisions are not logged (decision_log_all is off): ${int(d.decisions.allowed)} in the trail`;
    case 'approvals': {
      const o = d.oversight;
      return `${plural(o.requested, 'approval request')}: ${int(o.approved)} approved, ${int(o.rejected)} rejected, ${int(o.expired)} expired, ${int(o.pending)} pending`;
    }
    case 'two_person_approvals': {
      const t = d.oversight.twoPerson;
      const distinct = t.rows.filter((r) => r.status === 'rejected' || new Set(r.approvers.split(', ').filter(Boolean)).size >= r.required).length;
      return t.total === 0
        ? `no two-person decision in the period${d.twoPersonRule ? ` (two people required from ${d.twoPersonRule.fromRisk} risk)` : ''}`
        : `${plural(t.total, 'two-person decision')}; ${int(distinct)} of ${int(t.rows.length)} listed decided by distinct approvers`;
    }
    case 'sign_ins':
      return `${plural(d.security.signIns, 'sign-in')} by ${plural(d.security.signInUsers, 'person', 'people')}, ${plural(d.security.failedSignIns, 'failed sign-in')}`;
    case 'security_events': {
      const refused = d.security.refused.total;
      return `${plural(d.security.total - d.decisions.allowed - d.decisions.asked, 'security event')} (decisions aside), ${int(refused)} refused`;
    }
    case 'flag_changes': {
      const refused = d.changes.flagChanges.refused;
      return `${plural(d.changes.flagChanges.total - refused, 'flag change')} with who and why, ${plural(refused, 'refused attempt')}`;
    }
    case 'policy_revisions':
      return `${plural(d.changes.revisions.total, 'policy revision')} first in force in the period; in force now ${d.scope.revisionInForce}`;
    case 'audit_reads':
      return `${plural(d.security.reads, 'read')} and ${plural(d.security.exports.total, 'export')} of the trail recorded, ${plural(d.security.reportsGenerated, 'report')} generated`;
    case 'chain_verification': {
      const rows = d.integrity.chains.reduce((n, c) => n + c.rowsChecked, 0);
      if (!d.integrity.ok) {
        const f = d.integrity.failures[0];
        return `chain verification FAILED${f ? `: ${f.table} ${f.problem} at ${f.id}` : ''}`;
      }
      return `chain verified: ${plural(rows, 'row')} intact at ${isoSeconds(d.integrity.verifiedAt)}`;
    }
    case 'signed_checkpoints': {
      const valid = d.integrity.chains.reduce((n, c) => n + c.checkpointsValid, 0);
      const all = d.integrity.chains.reduce((n, c) => n + c.checkpoints, 0);
      if (all === 0) return 'no signed checkpoint yet';
      return `${int(valid)} of ${plural(all, 'signed checkpoint')} valid, ${int(d.integrity.checkpointsInPeriod)} signed in the period${d.integrity.key ? `; key ${d.integrity.key.keyId}` : ''}`;
    }
    case 'retention':
      return d.retention
        ? `retention ${int(d.retention.minDays)} days enforced by archive (${d.retention.profile}); ${plural(d.retention.archives, 'archive')} so far${d.retention.oldestLiveRow !== null ? `, oldest live denial ${isoSeconds(d.retention.oldestLiveRow).slice(0, 10)}` : ''}`
        : 'no retention minimum is set by the active profiles';
    case 'masking':
      return d.masking
        ? `${plural(d.masking.keys.length, 'argument key')} masked beyond the built-in detectors; ${d.denials.masked === undefined ? '' : `${plural(d.denials.masked, 'denial')} in the period had masked values`}`.replace(/; $/, '')
        : 'built-in detectors only (no profile masking keys)';
  }
}

export interface ServedByState {
  ref: string;
  ok: boolean;
  text: string;
}

/** Whether each rule, gate, flag, invariant or setting that serves a control is in force now. */
export function servedByState(app: App, profile: LoadedProfile, c: ControlMapping): ServedByState[] {
  const flags = app.flags.resolution().flags;
  return c.servedBy.map((s) => {
    const ref = `${s.kind}:${s.ref}`;
    switch (s.kind) {
      case 'invariant':
      case 'flag': {
        const f = flags.get(s.ref);
        if (!f) return { ref, ok: false, text: `${s.ref} is not a known flag` };
        const locked = f.lockedBy?.length ? `, locked by ${f.lockedBy.join(', ')}` : '';
        return { ref, ok: f.value, text: `${s.ref} ${f.value ? 'on' : 'OFF'} (${f.layer}${locked})` };
      }
      case 'gate': {
        const g = app.gates.gates.find((x) => x.id === s.ref);
        return g
          ? { ref, ok: true, text: `gate ${s.ref}: ${g.approvers.count === 1 ? 'one approver' : `${g.approvers.count} approvers`}, ${g.risk} risk` }
          : { ref, ok: false, text: `gate ${s.ref} is NOT in force` };
      }
      case 'rule': {
        const id = `${profile.name}/${s.ref}`;
        const found = app.policy.rules.some((r) => r.id === id);
        return { ref, ok: found, text: found ? `rule policy:${id} in force` : `rule policy:${id} is NOT in force` };
      }
      case 'setting': {
        const ok =
          s.ref === 'retention' ? profile.retention !== undefined : s.ref === 'masking' ? profile.masking !== undefined : s.ref === 'approvals' ? profile.approvals !== undefined : true;
        const text =
          s.ref === 'retention' && profile.retention
            ? `retention ${profile.retention.minDays} days`
            : s.ref === 'masking' && profile.masking
              ? `masking ${profile.masking.keys.length} keys`
              : s.ref === 'approvals' && profile.approvals
                ? `two people from ${profile.approvals.twoPersonFromRisk} risk`
                : s.ref === 'locks'
                  ? `${plural(profile.locks.size, 'locked flag')}`
                  : `setting ${s.ref} missing`;
        return { ref, ok, text };
      }
    }
  });
}

export interface ControlRow {
  profile: string;
  control: ControlMapping;
  evidence: { kind: EvidenceKind; text: string }[];
  servedBy: ServedByState[];
  /** every serving element in force and, where the control asks for it, the chain verified */
  inForce: boolean;
  problems: string[];
}

export function controlRows(app: App, d: ReportData): ControlRow[] {
  return d.controls.flatMap(({ profile }) =>
    profile.controls.map((control) => {
      const servedBy = servedByState(app, profile, control);
      const problems = servedBy.filter((s) => !s.ok).map((s) => s.text);
      if ((control.evidence.includes('chain_verification') || control.evidence.includes('signed_checkpoints')) && !d.integrity.ok) {
        problems.push('the audit chain did not verify');
      }
      return {
        profile: profile.name,
        control,
        evidence: control.evidence.map((kind) => ({ kind, text: evidenceFor(kind, d) })),
        servedBy,
        inForce: problems.length === 0,
        problems,
      };
    }),
  );
}
