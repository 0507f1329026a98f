/**
 * The flag catalog: every feature of the platform, its tier, its declared default, the environment variable and
 * legacy aliases that may set it, who owns it, and what it guards. A guarded tool or HTTP path is denied by the
 * engine while its flag is off (`flag:<name>`).
 */

export const FLAG_TIERS = ['invariant', 'flag', 'experiment'] as const;
export type FlagTier = (typeof FLAG_TIERS)[number];

export interface FlagDefinition {
  name: string;
  tier: FlagTier;
  defaultValue: boolean;
  /** the environment variable that sets it: SWARM_FLAG_<NAME> */
  envVar: string;
  /** legacy environment variable names still honoured, after envVar */
  aliases: readonly string[];
  owner: string;
  description: string;
  guards: { tools: readonly string[]; paths: readonly string[] };
}

export const FLAG_ENV_PREFIX = 'SWARM_FLAG_';

type Spec = Omit<FlagDefinition, 'envVar' | 'aliases' | 'guards'> & {
  aliases?: readonly string[];
  tools?: readonly string[];
  paths?: readonly string[];
};

function flag(spec: Spec): FlagDefinition {
  return {
    name: spec.name,
    tier: spec.tier,
    defaultValue: spec.defaultValue,
    envVar: `${FLAG_ENV_PREFIX}${spec.name.toUpperCase()}`,
    aliases: spec.aliases ?? [],
    owner: spec.owner,
    description: spec.description,
    guards: { tools: spec.tools ?? [], paths: spec.paths ?? [] },
  };
}

export const FLAG_CATALOG: readonly FlagDefinition[] = [
  // Invariants: cannot be turned off by override, environment or alias.
  flag({
    name: 'audit_trail_security_events',
    tier: 'invariant',
    defaultValue: true,
    owner: 'compliance',
    description: 'Every permission denial and security event is written to the audit table before the decision is returned. Required by BFSI, healthcare and EU AI Act audits.',
  }),
  flag({
    name: 'secret_redaction',
    tier: 'invariant',
    defaultValue: true,
    owner: 'security',
    description: 'Passwords, tokens, API keys and other secrets are removed from tool arguments before they are stored or shown.',
  }),
  flag({
    name: 'hitl_gates',
    tier: 'invariant',
    defaultValue: true,
    owner: 'compliance',
    description: 'Tools declared as needing human approval (deployments, promotions, raw data exports) always wait for an operator.',
  }),
  // Flags: production-facing and stable.
  flag({
    name: 'decision_log_all',
    tier: 'flag',
    defaultValue: false,
    owner: 'compliance',
    description: 'Allowed and asked decisions are written to the audit trail too (security_events, decision.allowed and decision.asked), not only denials.',
  }),
  flag({
    name: 'cron_scheduler',
    tier: 'flag',
    defaultValue: true,
    owner: 'platform',
    aliases: ['ML_TEAM_CRON_ENABLED'],
    description: 'Agents may schedule recurring jobs (nightly retraining, reports).',
    tools: ['schedule_job'],
    paths: ['/api/v1/schedules/**'],
  }),
  flag({
    name: 'batch_runner',
    tier: 'flag',
    defaultValue: true,
    owner: 'platform',
    aliases: ['ML_TEAM_BATCH_ENABLED'],
    description: 'Agents may run batch jobs over whole datasets (scoring, backfills).',
    tools: ['run_batch'],
  }),
  flag({
    name: 'auto_fairness_audit',
    tier: 'flag',
    defaultValue: true,
    owner: 'responsible-ai',
    aliases: ['FAIRNESS_AUDIT_AUTO'],
    description: 'Agents run the fairness audit of a model automatically before it can be promoted.',
    tools: ['fairness_audit'],
  }),
  flag({
    name: 'model_training',
    tier: 'flag',
    defaultValue: true,
    owner: 'ml-platform',
    description: 'Agents may start model training runs on the shared compute pool.',
    tools: ['train_model', 'tune_hyperparameters'],
  }),
  flag({
    name: 'model_registry_writes',
    tier: 'flag',
    defaultValue: true,
    owner: 'ml-platform',
    description: 'Agents may register new model versions and promote a challenger over the champion.',
    tools: ['register_model', 'promote_challenger'],
  }),
  flag({
    name: 'serving_deployments',
    tier: 'flag',
    defaultValue: true,
    owner: 'ml-platform',
    aliases: ['ML_TEAM_DEPLOY_ENABLED'],
    description: 'Agents may deploy and roll back models in the serving environments (still subject to approval).',
    tools: ['deploy_serving', 'rollback_serving'],
  }),
  flag({
    name: 'raw_data_export',
    tier: 'flag',
    defaultValue: true,
    owner: 'data-governance',
    description: 'Raw (unmasked) data can leave the platform through an export tool (still subject to approval).',
    tools: ['export_raw_data'],
  }),
  flag({
    name: 'dataset_ingestion',
    tier: 'flag',
    defaultValue: true,
    owner: 'data-platform',
    description: 'Agents may ingest new datasets from the approved source systems.',
    tools: ['ingest_dataset'],
  }),
  flag({
    name: 'drift_monitoring',
    tier: 'flag',
    defaultValue: true,
    owner: 'ml-platform',
    description: 'Agents watch deployed models for data and prediction drift.',
    tools: ['monitor_drift'],
  }),
  flag({
    name: 'external_web_access',
    tier: 'flag',
    defaultValue: false,
    owner: 'security',
    description: 'Agents may fetch pages from the public internet. Off by default: data could leave through a request.',
    tools: ['web_fetch'],
  }),
  flag({
    name: 'email_notifications',
    tier: 'flag',
    defaultValue: true,
    owner: 'platform',
    description: 'Agents may send e-mail notifications to the model owners.',
    tools: ['send_email'],
  }),
  flag({
    name: 'approvals_api',
    tier: 'flag',
    defaultValue: true,
    owner: 'platform',
    description: 'The REST API for approving and rejecting gated calls. Off closes it; the console page follows it.',
    paths: ['/api/v1/approvals/**'],
  }),
  // Experiments: opt-in, may change or disappear.
  flag({
    name: 'plugin_shell_hooks_enabled',
    tier: 'experiment',
    defaultValue: false,
    owner: 'platform',
    description: 'Plugins may run shell commands as lifecycle hooks. Experimental; runs arbitrary commands.',
    tools: ['run_shell_hook'],
  }),
  flag({
    name: 'hooks_enabled',
    tier: 'experiment',
    defaultValue: false,
    owner: 'platform',
    aliases: ['ML_TEAM_HOOKS'],
    description: 'Lifecycle hooks that can inspect, change or block tool calls.',
    tools: ['register_hook'],
  }),
  flag({
    name: 'evaluator_grading',
    tier: 'experiment',
    defaultValue: false,
    owner: 'responsible-ai',
    description: 'A language model grades evaluation outputs instead of fixed metrics. Experimental.',
    tools: ['grade_with_llm'],
  }),
  flag({
    name: 'auto_retraining',
    tier: 'experiment',
    defaultValue: false,
    owner: 'ml-platform',
    description: 'Models retrain themselves when drift is detected, without a person starting the run.',
    tools: ['schedule_retraining'],
  }),
  flag({
    name: 'synthetic_data_generation',
    tier: 'experiment',
    defaultValue: false,
    owner: 'data-governance',
    description: 'Agents may generate synthetic training data from production distributions.',
    tools: ['generate_synthetic_data'],
  }),
];

export const FLAGS_BY_NAME: ReadonlyMap<string, FlagDefinition> = new Map(FLAG_CATALOG.map((f) => [f.name, f]));
