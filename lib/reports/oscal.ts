/**
 * The report's findings as OSCAL 1.1 assessment results (JSON), so that GRC tools can take them in: the metadata
 * (who generated it, when, the report id), import-ap pointing at the assessment plan (here: the control mapping of the
 * active compliance profiles, described in back-matter), and one result for the period with
 *   - an observation per kind of evidence (its figure for the period) and one for the chain verification, and
 *   - a finding per control of the profiles in scope, with the observations that are its evidence, and the control's
 *     status as the PDF states it: demonstrated is `satisfied`; not demonstrated is `not-satisfied` (reason `fail`)
 *     with what is missing in remarks; not applicable is `not-satisfied` with reason `other` and remarks that begin
 *     "Not applicable:" (OSCAL's objective status has no third state, and a control with nothing to show is never
 *     reported as satisfied). The status in words is also the property `control-status`.
 *
 * OSCAL identifiers: UUIDs are version 5 (derived from the report id, so one report always gives the same document)
 * and control ids are tokens (a letter first), so "10.2.1" of PCI DSS in profile bfsi becomes "bfsi_pci-dss-v4.0_10.2.1"
 * with the original id kept in a property.
 */
import { createHash } from 'node:crypto';
import type { EvidenceKind } from '@/lib/profiles/profile';
import type { ReportData } from './data';
import { assessEvidence, coverageNotes, int, type ControlRow } from './evidence';
import { describePeriod, isoSeconds } from './period';

export const OSCAL_VERSION = '1.1.2';
/** The namespace of this product's OSCAL properties. */
export const OSCAL_NS = 'urn:swarm-permissions:oscal';
/** The UUIDv5 namespace of this product's OSCAL documents (a fixed, random UUID). */
const UUID_NAMESPACE = '6f1c2a4e-8b3d-4c5a-9e7f-2d1b0a9c8e7d';

/** RFC 9562 UUID version 5: SHA-1 of the namespace and the name. */
export function uuidV5(name: string, namespace = UUID_NAMESPACE): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const h = createHash('sha1').update(ns).update(name, 'utf8').digest().subarray(0, 16);
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** An OSCAL token: a letter or "_" first, then letters, digits, ".", "-" and "_". */
export function oscalToken(...parts: string[]): string {
  const t = parts
    .map((p) => p.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^-+|-+$/g, ''))
    .filter(Boolean)
    .join('_');
  return /^[a-z_]/.test(t) ? t : `c_${t}`;
}

const iso = (t: number) => new Date(t * 1000).toISOString();
const prop = (name: string, value: string | number, extra: Record<string, string> = {}) => ({ name, ns: OSCAL_NS, value: String(value), ...extra });

const EVIDENCE_TITLES: Record<EvidenceKind, string> = {
  denials: 'Denials recorded',
  decisions_logged: 'Decisions logged',
  approvals: 'Human approvals',
  two_person_approvals: 'Two-person approvals',
  sign_ins: 'Sign-ins',
  security_events: 'Security events',
  flag_changes: 'Flag changes',
  policy_revisions: 'Policy revisions',
  audit_reads: 'Reads and exports of the audit trail',
  chain_verification: 'Hash-chain verification',
  signed_checkpoints: 'Signed checkpoints',
  retention: 'Retention',
  masking: 'Masking of argument values',
};

/** An observation of evidence, tested by the system, with what it rests on and when it was collected. */
function observation(uuid: string, title: string, description: string, props: ReturnType<typeof prop>[], evidence: string, collected: string) {
  return { uuid, title, description, props, methods: ['TEST'], types: ['control-objective'], 'relevant-evidence': [{ description: evidence }], collected };
}

/** An observation's description: the figure, and what it lacks for the period when it lacks something. */
function observationText(kind: EvidenceKind, d: ReportData): string {
  const a = assessEvidence(kind, d);
  return `${a.text}.${a.state === 'not_demonstrated' ? ` Missing: ${a.why}.` : a.state === 'not_applicable' ? ` Not applicable: ${a.why}.` : ''}`;
}

/** The OSCAL objective status of a control (see the module's comment). */
export function findingStatus(r: Pick<ControlRow, 'status' | 'reasons'>): { state: 'satisfied' | 'not-satisfied'; reason?: string; remarks?: string } {
  if (r.status === 'demonstrated') return { state: 'satisfied', reason: 'pass' };
  if (r.status === 'not_applicable') return { state: 'not-satisfied', reason: 'other', remarks: `Not applicable: ${r.reasons.join('; ')}.` };
  return { state: 'not-satisfied', reason: 'fail', remarks: `Not demonstrated: ${r.reasons.join('; ')}.` };
}

export function buildOscal(d: ReportData, controls: readonly ControlRow[]) {
  const u = (name: string) => uuidV5(`${d.id}:${name}`);
  const generated = iso(d.generatedAt);
  const person = u(`party:${d.generatedBy.actor}`);
  const system = u('party:system');
  const planResource = u('resource:assessment-plan');

  const kinds = [...new Set(controls.flatMap((c) => c.control.evidence))];
  const observationOf = (kind: EvidenceKind) => u(`observation:${kind}`);
  const integrityObservation = u('observation:integrity');
  const chainRows = d.integrity.chains.reduce((n, c) => n + c.rowsChecked, 0);

  const observations = [
    observation(
      integrityObservation,
      'Integrity of the audit trail',
      d.integrity.ok
        ? `Both hash chains recomputed row by row (${int(chainRows)} rows) and every signed checkpoint checked: intact.`
        : `Verification failed: ${d.integrity.failures.map((f) => `${f.table} at ${f.id}: ${f.problem}`).join('; ')}.`,
      [
        prop('verified', d.integrity.ok ? 'true' : 'false'),
        ...(d.integrity.key ? [prop('public-key-fingerprint', d.integrity.key.fingerprint), prop('public-key-id', d.integrity.key.keyId)] : []),
        ...d.integrity.chains.flatMap((c) => [
          prop('chain-rows', c.rowsChecked, { class: c.chain }),
          prop('checkpoints-valid', `${c.checkpointsValid}/${c.checkpoints}`, { class: c.chain }),
          ...(c.newest ? [prop('verified-up-to-checkpoint', c.newest.id, { class: c.chain, remarks: `row ${c.newest.size}, signed ${iso(c.newest.signedAt)}` })] : []),
        ]),
      ],
      'npx swarm audit verify --public-key KEYFILE reproduces this result.',
      iso(d.integrity.verifiedAt),
    ),
    observation(
      u('observation:access'),
      'Access',
      `${int(d.access.roleHolders.length)} people held a role in the period; ${int(d.access.breakGlass.total)} break-glass sign-ins; ${int(d.access.staleTokens.total)} API tokens not revoked are past their rotation period${d.access.tokenPolicy?.maxDays ? ` (older than ${d.access.tokenPolicy.maxDays} days, or expired)` : ' (expired)'}.`,
      [
        prop('role-holders', d.access.roleHolders.length),
        prop('break-glass-sign-ins', d.access.breakGlass.total),
        prop('tokens-past-rotation', d.access.staleTokens.total),
        ...d.access.roleHolders.map((h) => prop('role-holder', h.username, { class: h.role, remarks: `roles held: ${h.rolesHeld.join(', ')}` })),
        ...d.access.staleTokens.rows.map((t) => prop('token-past-rotation', t.id, { remarks: `${t.name} (${t.owner}), created ${iso(t.createdAt)}, ${t.reason.replace('_', ' ')}` })),
      ],
      `Computed from the users, API tokens and security events for ${describePeriod(d.period)}, report ${d.id}.`,
      generated,
    ),
    ...kinds.map((kind) =>
      observation(observationOf(kind), EVIDENCE_TITLES[kind], observationText(kind, d), [prop('evidence-kind', kind)], `Computed from the audit trail for ${describePeriod(d.period)}, report ${d.id}.`, generated),
    ),
  ];

  const findings = controls.map((r) => {
    const token = oscalToken(r.profile, r.control.framework, r.control.id);
    const related = [...r.control.evidence.map(observationOf)];
    if (r.control.evidence.includes('chain_verification') || r.control.evidence.includes('signed_checkpoints')) related.push(integrityObservation);
    return {
      uuid: u(`finding:${token}`),
      title: `${r.control.framework} ${r.control.id}: ${r.control.title}`,
      description: `${r.control.how} Served by: ${r.servedBy.map((s) => s.text).join('; ')}.`,
      props: [prop('profile', r.profile), prop('framework', r.control.framework), prop('control-id', r.control.id), prop('control-status', r.status.replace('_', '-'))],
      target: {
        type: 'objective-id',
        'target-id': token,
        status: findingStatus(r),
      },
      'related-observations': [...new Set(related)].map((id) => ({ 'observation-uuid': id })),
    };
  });

  return {
    'assessment-results': {
      uuid: u('document'),
      metadata: {
        title: `${d.system} audit report, ${describePeriod(d.period)}`,
        published: generated,
        'last-modified': generated,
        version: d.id,
        'oscal-version': OSCAL_VERSION,
        props: [prop('report-id', d.id), prop('policy-revision', d.scope.revisionInForce), ...d.scope.profiles.map((p) => prop('compliance-profile', p.name))],
        roles: [
          { id: 'assessor', title: 'Generated the report' },
          { id: 'assessment-tool', title: 'The system that collected the evidence' },
        ],
        parties: [
          { uuid: person, type: 'person', name: d.generatedBy.actor, ...(d.generatedBy.role ? { props: [prop('role', d.generatedBy.role)] } : {}) },
          { uuid: system, type: 'organization', name: d.system },
        ],
        'responsible-parties': [
          { 'role-id': 'assessor', 'party-uuids': [person] },
          { 'role-id': 'assessment-tool', 'party-uuids': [system] },
        ],
      },
      'import-ap': { href: `#${planResource}` },
      results: [
        {
          uuid: u('result'),
          title: `Audit of ${describePeriod(d.period)}`,
          description:
            d.scope.profiles.length > 0
              ? `Evidence for the controls of ${d.scope.profiles.map((p) => `${p.title} (${p.name})`).join(', ')}, computed from the hash-chained audit trail.`
              : 'No compliance profile is active: the result holds the integrity observation only.',
          start: iso(d.period.from),
          end: iso(d.period.to),
          ...(coverageNotes(d).length > 0 ? { remarks: coverageNotes(d).join(' ') } : {}),
          props: [
            prop('denials', d.denials.total),
            prop('decisions-logged', d.decisions.total),
            prop('approval-requests', d.oversight.requested),
            prop('security-events', d.security.total),
            prop('period', `${isoSeconds(d.period.from)}/${isoSeconds(d.period.to)}`, { remarks: 'start included, end excluded' }),
          ],
          'reviewed-controls': {
            'control-selections': [
              findings.length > 0 ? { 'include-controls': findings.map((f) => ({ 'control-id': f.target['target-id'] })) } : { 'include-all': {} },
            ],
          },
          observations,
          ...(findings.length > 0 ? { findings } : {}),
        },
      ],
      'back-matter': {
        resources: [
          {
            uuid: planResource,
            title: 'Assessment plan: the control mapping of the active compliance profiles',
            description:
              'The controls assessed and the evidence each one is assessed by are declared in the profiles\' profile.yaml (controls: id, framework, served_by, evidence). Control ids are made OSCAL tokens: profile, framework and control id joined by "_".',
            ...(d.scope.profiles.length > 0 ? { props: d.scope.profiles.map((p) => prop('compliance-profile', p.name, { remarks: p.frameworks.join('; ') })) } : {}),
          },
        ],
      },
    },
  };
}
