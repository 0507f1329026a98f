/**
 * Test fixture for the report: a week of audit trail written through the production stores and recorder of a real
 * application (denials inside and around the period, allowed decisions, approvals decided by one and by two people,
 * rejected and expired requests, flag changes and a refused one, sign-ins, an export), and a signed checkpoint.
 * The expected figures are counted from what was written, never typed in by hand.
 */
import type { SqliteApp } from '@/lib/app';
import { recordAuditRead } from '@/lib/audit/reads';
import { changeFlag } from '@/lib/flags/change';
import { deployRequest } from '@/lib/test-support/temp-app';
import type { ReportPeriod } from './period';

const DAY = 86400;

export interface SeededTrail {
  period: ReportPeriod;
  /** denials written inside [from, to) by this fixture (the engine's own denials come on top) */
  denialsInPeriod: number;
  /** denials written just outside: before `from`, exactly at `to`, after `to` */
  outside: { before: number; atEnd: number; after: number };
  byAgent: Map<string, number>;
}

const SHAPES: [agent: string, tool: string, rule: string, reason: string][] = [
  ['data_cleaner', 'deploy_serving', 'agent_allowlist', 'Tool "deploy_serving" is not in the allowlist of agent "data_cleaner".'],
  ['trainer', 'tune_hyperparameters', 'policy:bfsi/tuning-capacity-review', 'Hyperparameter searches of 500 or more trials need a capacity review first.'],
  ['evaluator', 'fairness_audit', 'flag:auto_fairness_audit', 'Feature flag "auto_fairness_audit" is off.'],
  ['shadow_agent', 'export_raw_data', 'agent_allowlist', 'Unknown agent "shadow_agent".'],
  ['compliance_agent', 'export_raw_data', 'policy:bfsi/no-pii-export', 'Exports that contain personal data are never allowed (GDPR art. 5).'],
];

/** Write a week of trail ending tomorrow at midnight UTC: the period is [today - 6 days, tomorrow). */
export async function seedTrail(app: SqliteApp, now = Date.now() / 1000): Promise<SeededTrail> {
  const to = (Math.floor(now / DAY) + 1) * DAY;
  const from = to - 7 * DAY;
  for (const [name, role] of [
    ['alex', 'auditor'],
    ['olivia', 'operator'],
    ['oscar', 'operator'],
    ['root', 'admin'],
  ] as const) {
    if (!(await app.auth.findUser(name))) await app.auth.createUser(name, role, `${name}-password-123`);
  }
  const byAgent = new Map<string, number>();
  let inPeriod = 0;
  const denial = (i: number, timestamp: number) => {
    const [agent, tool, rule, reason] = SHAPES[i % SHAPES.length]!;
    app.recorder.appendDenial({ toolName: tool, agentName: agent, ruleSource: rule, reason, userRole: 'viewer', principal: agent, argumentsJson: JSON.stringify({ n: i, card_number: '4111 1111 1111 1111' }), timestamp });
    if (timestamp >= from && timestamp < to) {
      inPeriod++;
      byAgent.set(agent, (byAgent.get(agent) ?? 0) + 1);
    }
  };
  // 60 denials spread over the period (never exactly at `to`), and some around it.
  for (let i = 0; i < 60; i++) denial(i, from + 60 + i * ((to - from - 120) / 60));
  for (let i = 0; i < 4; i++) denial(i, from - 3600 * (i + 1));
  denial(1, to);
  denial(2, to);
  for (let i = 0; i < 3; i++) denial(i, to + 3600 * (i + 1));

  // Real decisions through the engine now: an allowed one (logged, decision_log_all is locked on) and a denied one.
  const agent = (name: string) => ({ kind: 'agent' as const, id: name, role: 'viewer' as const, agent: name });
  app.engine.decide({ kind: 'tool', principal: agent('data_cleaner'), agent: 'data_cleaner', tool: 'profile_dataset', arguments: { dataset_id: 'ds_1' } });
  app.engine.decide({ kind: 'tool', principal: agent('data_cleaner'), agent: 'data_cleaner', tool: 'train_model', arguments: {} });

  // Human oversight: a two-person approval, a one-person approval, a rejection, an expiry.
  const olivia = { kind: 'user' as const, id: 'olivia', role: 'operator' as const };
  const oscar = { kind: 'user' as const, id: 'oscar', role: 'operator' as const };
  const two = await app.approvals.request(deployRequest({ arguments: { model_id: 'm-1', env: 'prod' }, approvalsRequired: 2, risk: 'high' }));
  await app.approvals.approve(two.id, olivia, 'model card attached');
  await app.approvals.approve(two.id, oscar, 'second reviewer from risk');
  const one = await app.approvals.request(deployRequest({ arguments: { model_id: 'm-2', env: 'staging' } }));
  await app.approvals.approve(one.id, olivia, 'staging first');
  const rejected = await app.approvals.request(deployRequest({ arguments: { model_id: 'm-3', env: 'prod' }, approvalsRequired: 2, risk: 'high' }));
  await app.approvals.reject(rejected.id, oscar, 'Outside the deploy window.');
  await app.approvals.request(deployRequest({ arguments: { model_id: 'm-4', env: 'prod' }, expiresInSeconds: -1 }));
  await app.approvals.expireDue();

  // Flags: a change with its reason, and a refused attempt to turn a locked flag off.
  const root = { kind: 'user' as const, id: 'root', role: 'admin' as const };
  await changeFlag(app, { name: 'email_notifications', value: !app.flags.values().get('email_notifications'), reason: 'Quarterly fairness review starts.' }, root);
  try {
    await changeFlag(app, { name: 'decision_log_all', value: false, reason: 'too noisy' }, root);
  } catch {
    // refused and recorded: the flag is locked by the profile
  }

  // Sign-ins, a failed one, and an export of the trail.
  app.recorder.record({ kind: 'auth', type: 'auth.login.succeeded', actor: 'alex', actorRole: 'auditor', outcome: 'succeeded', target: 'alex' });
  app.recorder.record({ kind: 'auth', type: 'auth.login.failed', actor: 'mallory', outcome: 'failed', target: 'mallory', detail: { reason: 'wrong user name or password' } });
  recordAuditRead(app, { principal: { kind: 'user', id: 'alex', role: 'auditor' }, what: 'permission_denials', filter: { since: 86400 }, export: 'csv' });

  app.checkpointAudit();
  return { period: { from, to }, denialsInPeriod: inPeriod, outside: { before: 4, atEnd: 2, after: 3 }, byAgent };
}
