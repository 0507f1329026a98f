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
/** A sampling rate as people read it: 10%, 2.5%, 0.1%. */
export const percent = (rate: number): string => `${Number((rate * 100).toPrecision(3))}%`;

/** The profiles' sampling when it is what keeps allowed decisions (decision_log_all off and a rate below 1). */
export function sampledDecisions(d: ReportData): NonNullable<ReportData['decisionSample']> | undefined {
  return !d.scope.decisionLogAll && d.decisionSample && d.decisionSample.rate < 1 ? d.decisionSample : undefined;
}

/** What each profile setting a control can be served by says, when the profile sets it (undefined: it does not). */
const SETTINGS: Record<string, (p: LoadedProfile) => string | undefined> = {
  retention: (p) => p.retention && `retention ${p.retention.minDays} days`,
  masking: (p) => p.masking && `masking ${p.masking.keys.length} keys`,
  approvals: (p) => p.approvals && `two people from ${p.approvals.twoPersonFromRisk} risk`,
  decision_log: (p) => p.decisionLog && `a ${percent(p.decisionLog.sample)} sample of allowed decisions`,
  sign_in: (p) => p.signIn && `sign-in lock after ${p.signIn.lockAfterFailures} failures for ${p.signIn.lockMinutes} min`,
  locks: (p) => plural(p.locks.size, 'locked flag'),
  change_control: (p) => p.changeControl && `changes to the rules need ${plural(p.changeControl.approvers, 'approver')} (${p.changeControl.roles.join(' or ')}) other than the proposer`,
  identity: (p) =>
    p.identity &&
    ([
      p.identity.tokenMaxDays && `tokens expire after ${p.identity.tokenMaxDays} days`,
      p.identity.tokenInactiveDays && `disabled after ${p.identity.tokenInactiveDays} days unused`,
      p.identity.localLogin && `local sign-in: ${p.identity.localLogin.replace('_', '-')}`,
    ]
      .filter(Boolean)
      .join(', ') ||
      undefined),
};

/** Whether each rule, gate, flag, invariant or setting that serves a control is in force now. */
export function servedByState(app: App, profile: LoadedProfile, c: ControlMapping) {
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
        const text = Object.hasOwn(SETTINGS, s.ref) ? SETTINGS[s.ref]!(profile) : undefined;
        return { ref, ok: text !== undefined, text: text ?? `setting ${s.ref} missing` };
      }
    }
  });
}

/** What a control's evidence shows for the period: the evidence exists, it does not, or the control had nothing to act on. */
export type ControlStatus = 'demonstrated' | 'not_demonstrated' | 'not_applicable';

export const STATUS_LABEL: Record<ControlStatus, string> = {
  demonstrated: 'demonstrated',
  not_demonstrated: 'not demonstrated',
  not_applicable: 'not applicable',
};

export interface EvidenceAssessment {
  kind: EvidenceKind;
  /** the figure for the period, in a line */
  text: string;
  state: ControlStatus;
  /** what is missing (not demonstrated) or why it does not apply (not applicable) */
  why?: string;
}

/**
 * What the cover states before any figure: a period before the trail's first row (wholly or partly), and days of rows
 * no signed checkpoint covers or a verification that failed. Empty when the trail speaks for the whole period.
 */
export function coverageNotes(d: ReportData): string[] {
  const c = d.coverage;
  const notes: string[] = [];
  const first = c.firstRowAt === null ? null : isoSeconds(c.firstRowAt);
  if (c.days.length > 0 && c.daysBeforeTrail.length === c.days.length) {
    notes.push(
      first === null
        ? 'This period predates the audit trail: the trail holds no rows yet, so nothing in it can demonstrate a control.'
        : `This period predates the audit trail, whose first row was recorded at ${first}: nothing in it can demonstrate a control.`,
    );
  } else if (c.daysBeforeTrail.length > 0) {
    notes.push(
      `The period begins before the audit trail: its first row was recorded at ${first ?? 'an unknown time'}, so ${plural(c.daysBeforeTrail.length, 'day')} of the period (${c.daysBeforeTrail[0]} to ${c.daysBeforeTrail[c.daysBeforeTrail.length - 1]}) hold no record and count as not reviewed.`,
    );
  } else if (c.daysWithRows.length === 0 && c.days.length > 0) {
    notes.push('The audit trail holds no rows in this period.');
  }
  if (c.unsignedDays.length > 0) {
    notes.push(
      `Gaps in the signed checkpoints: the rows of ${plural(c.unsignedDays.length, 'day')} (${listDays(c.unsignedDays)}) are chained but no signed checkpoint covers them yet (run \`npx swarm audit checkpoint\`).`,
    );
  }
  if (!d.integrity.ok) notes.push(`The verification of the trail found ${plural(d.integrity.failures.length, 'problem')}: see "Integrity of the audit trail".`);
  return notes;
}

const listDays = (days: readonly string[], max = 3) => `${days.slice(0, max).join(', ')}${days.length > max ? ', …' : ''}`;

/**
 * One kind of evidence over the report's period: its figure in a line, and whether the evidence exists for the period.
 * Configuration alone never demonstrates anything: the trail must hold rows in the period, and the kinds that are an
 * activity (logging, reviewing, signing) must show that activity.
 */
export function assessEvidence(kind: EvidenceKind, d: ReportData): EvidenceAssessment {
  const c = d.coverage;
  // The figure and its verdict: demonstrated unless something is `missing` or the kind was `notApplicable` in the period.
  const judged = (text: string, missing?: string, notApplicable?: string): EvidenceAssessment => {
    if (c.daysWithRows.length === 0) {
      const why = c.days.length > 0 && c.daysBeforeTrail.length === c.days.length ? 'the period predates the audit trail: no rows in the period' : 'no rows in the period';
      return { kind, text, state: 'not_demonstrated', why };
    }
    if (missing) return { kind, text, state: 'not_demonstrated', why: missing };
    return notApplicable ? { kind, text, state: 'not_applicable', why: notApplicable } : { kind, text, state: 'demonstrated' };
  };
  switch (kind) {
    case 'denials': {
      const fams = d.denials.families.slice(0, 3).map((f) => `${f.value} ${int(f.count)}`).join(', ');
      // None in a period the trail was recording is itself the evidence: nothing was refused.
      return judged(`${plural(d.denials.total, 'denial')} recorded, each attributed to its rule${fams ? ` (${fams}${d.denials.families.length > 3 ? ', …' : ''})` : ''}`);
    }
    case 'decisions_logged': {
      // A sample is not every decision: the control asks for the log of all of them.
      const sample = sampledDecisions(d);
      if (sample) {
        return judged(
          `${plural(d.decisions.denied, 'denial')} logged; allowed and asked decisions are a ${percent(sample.rate)} sample (decision_log_all is off; ${sample.profile}): ${int(d.decisions.allowed)} allowed, ${int(d.decisions.asked)} asked kept`,
          `allowed decisions are a ${percent(sample.rate)} sample, not all of them (decision_log_all is off)`,
        );
      }
      return d.scope.decisionLogAll
        ? judged(
            `${plural(d.decisions.total, 'decision')} logged: ${int(d.decisions.allowed)} allowed, ${int(d.decisions.asked)} asked, ${int(d.decisions.denied)} denied`,
            d.decisions.total > 0 ? undefined : 'no decisions logged in the period',
          )
        : judged(
            `${plural(d.decisions.denied, 'denial')} logged; allowed decisions are not logged (decision_log_all is off): ${int(d.decisions.allowed)} in the trail`,
            'allowed decisions are not logged (decision_log_all is off)',
          );
    }
    case 'approvals': {
      const o = d.oversight;
      const text = `${plural(o.requested, 'approval request')}: ${int(o.approved)} approved, ${int(o.rejected)} rejected, ${int(o.expired)} expired, ${int(o.pending)} pending`;
      return judged(text, undefined, o.requested > 0 ? undefined : 'no approval request in the period: no gated call was made');
    }
    case 'two_person_approvals': {
      const t = d.oversight.twoPerson;
      const distinct = t.rows.filter((r) => r.status === 'rejected' || new Set(r.approvers.split(', ').filter(Boolean)).size >= r.required).length;
      return t.total === 0
        ? judged(`no two-person decision in the period${d.twoPersonRule ? ` (two people required from ${d.twoPersonRule.fromRisk} risk)` : ''}`, undefined, 'no call in the period needed two approvers')
        : judged(`${plural(t.total, 'two-person decision')}; ${int(distinct)} of ${int(t.rows.length)} listed decided by distinct approvers`);
    }
    case 'sign_ins': {
      const s = d.security;
      const text = `${plural(s.signIns, 'sign-in')} by ${plural(s.signInUsers, 'person', 'people')}, ${plural(s.failedSignIns, 'failed sign-in')}`;
      return judged(text, s.signIns + s.failedSignIns > 0 ? undefined : 'no sign-ins recorded in the period');
    }
    case 'security_events': {
      const events = d.security.total - d.decisions.allowed - d.decisions.asked;
      return judged(`${plural(events, 'security event')} (decisions aside), ${int(d.security.refused.total)} refused`, events > 0 ? undefined : 'no security events in the period');
    }
    case 'flag_changes': {
      const refused = d.changes.flagChanges.refused;
      // None in a period the trail was recording is itself the evidence: nothing was changed.
      return judged(`${plural(d.changes.flagChanges.total - refused, 'flag change')} with who and why, ${plural(refused, 'refused attempt')}`);
    }
    case 'policy_revisions':
      return judged(
        `${plural(d.changes.revisions.total, 'policy revision')} first in force in the period; in force now ${d.scope.revisionInForce}`,
        d.changes.revisionAtStart !== null || d.changes.revisions.total > 0 ? undefined : 'no policy revision is recorded for the period',
      );
    case 'audit_reads': {
      // Reviewed at least daily: a read or export by a person on every day of the period; a day before the trail's
      // first row was not reviewed (there was nothing to review, and nobody did).
      const reviewed = new Set(c.reviewedDays);
      const notReviewed = c.days.filter((day) => !reviewed.has(day));
      return judged(
        `${plural(d.security.reads, 'read')} and ${plural(d.security.exports.total, 'export')} of the trail recorded, ${plural(d.security.reportsGenerated, 'report')} generated`,
        c.days.length === 0
          ? 'the period had not begun when the report was generated'
          : notReviewed.length === 0
            ? undefined
            : `no reviews recorded on ${int(notReviewed.length)} of ${plural(c.days.length, 'day')} (${listDays(notReviewed)})`,
      );
    }
    case 'chain_verification': {
      const rows = d.integrity.chains.reduce((n, chain) => n + chain.rowsChecked, 0);
      const f = d.integrity.failures[0];
      return d.integrity.ok
        ? judged(`chain verified: ${plural(rows, 'row')} intact at ${isoSeconds(d.integrity.verifiedAt)}`)
        : judged(`chain verification FAILED${f ? `: ${f.table} ${f.problem} at ${f.id}` : ''}`, 'the audit chain did not verify');
    }
    case 'signed_checkpoints': {
      const valid = d.integrity.chains.reduce((n, chain) => n + chain.checkpointsValid, 0);
      const all = d.integrity.chains.reduce((n, chain) => n + chain.checkpoints, 0);
      const waiting = c.waitingDays.length > 0 ? `; the newest rows of ${listDays(c.waitingDays)} wait for the next checkpoint` : '';
      const text = all === 0 ? 'no signed checkpoint yet' : `${int(valid)} of ${plural(all, 'signed checkpoint')} valid, ${int(d.integrity.checkpointsInPeriod)} signed in the period${d.integrity.key ? `; key ${d.integrity.key.keyId}` : ''}${waiting}`;
      const signedInPeriod = c.daysWithRows.filter((day) => !c.unsignedDays.includes(day));
      if (signedInPeriod.length === 0) return judged(text, 'no checkpoints in the period: no signed checkpoint covers its rows');
      if (c.unsignedDays.length > 0) return judged(text, `no signed checkpoint covers the rows of ${int(c.unsignedDays.length)} of ${plural(c.daysWithRows.length, 'day')} with rows (${listDays(c.unsignedDays)})`);
      return judged(text, d.integrity.ok ? undefined : 'the signed checkpoints did not verify');
    }
    case 'retention': {
      const none = 'no retention minimum is set by the active profiles';
      return d.retention
        ? judged(`retention ${int(d.retention.minDays)} days enforced by archive (${d.retention.profile}); ${plural(d.retention.archives, 'archive')} so far${d.retention.oldestLiveRow !== null ? `, oldest live denial ${isoSeconds(d.retention.oldestLiveRow).slice(0, 10)}` : ''}`)
        : judged(none, none);
    }
    case 'masking':
      return judged(
        d.masking
          ? `${plural(d.masking.keys.length, 'argument key')} masked beyond the built-in detectors; ${d.denials.masked === undefined ? '' : `${plural(d.denials.masked, 'denial')} in the period had masked values`}`.replace(/; $/, '')
          : 'built-in detectors only (no profile masking keys)',
      );
  }
}

export type ControlRow = ReturnType<typeof controlRows>[number];

/**
 * A control's status: not demonstrated when anything that serves it is not in force or any of its evidence is missing;
 * not applicable when none of its evidence applied in the period (and nothing is missing); else demonstrated.
 */
export function controlStatus(evidence: readonly EvidenceAssessment[], problems: readonly string[]): { status: ControlStatus; reasons: string[] } {
  const missing = evidence.filter((e) => e.state === 'not_demonstrated').map((e) => e.why ?? e.kind);
  if (problems.length > 0 || missing.length > 0) return { status: 'not_demonstrated', reasons: [...new Set([...problems, ...missing])] };
  if (evidence.length > 0 && evidence.every((e) => e.state === 'not_applicable')) return { status: 'not_applicable', reasons: evidence.map((e) => e.why ?? e.kind) };
  return { status: 'demonstrated', reasons: [] };
}

/** "3 demonstrated, 9 not demonstrated, 1 not applicable" */
export function controlCounts(rows: readonly Pick<ControlRow, 'status'>[]): string {
  const n = (status: ControlStatus) => rows.filter((r) => r.status === status).length;
  return `${int(n('demonstrated'))} demonstrated, ${int(n('not_demonstrated'))} not demonstrated, ${int(n('not_applicable'))} not applicable`;
}

export function controlRows(app: App, d: ReportData) {
  return d.controls.flatMap(({ profile }) =>
    profile.controls.map((control) => {
      const servedBy = servedByState(app, profile, control);
      const problems = servedBy.filter((s) => !s.ok).map((s) => s.text);
      if ((control.evidence.includes('chain_verification') || control.evidence.includes('signed_checkpoints')) && !d.integrity.ok) {
        problems.push('the audit chain did not verify');
      }
      const evidence = control.evidence.map((kind) => assessEvidence(kind, d));
      return {
        profile: profile.name,
        control,
        evidence,
        servedBy,
        /** every serving element in force and, where the control asks for it, the chain verified */
        inForce: problems.length === 0,
        /** what is not in force */
        problems,
        // What serves it must be in force as well: evidence of a period says nothing of a rule no longer loaded. The
        // status is demonstrated only with its evidence for the period and everything that serves it in force; the
        // reasons say why it is not demonstrated, or not applicable: what is missing, and what is not in force.
        ...controlStatus(evidence, problems.map((p) => (servedBy.some((x) => !x.ok && x.text === p) ? `not in force: ${p}` : p))),
      };
    }),
  );
}
