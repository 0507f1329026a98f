/**
 * The tools of the agent platform this console guards. The gated ones declare their approval gate here, where they
 * are defined; the application registers these gates with the HITL source at start.
 */
import { z } from 'zod';
import { requireApproval } from '@/lib/approvals/gates';
import { tool, type ToolDefinition } from './tool';

const datasetId = z.string().min(1).max(200);
const modelId = z.string().min(1).max(200);
const env = z.enum(['dev', 'staging', 'prod']);

const done = (what: string) => (args: unknown) => ({ ok: true, what, args });

export const PLATFORM_TOOLS: readonly ToolDefinition[] = [
  tool({ name: 'profile_dataset', description: 'Profile a dataset (schema, nulls, ranges).', schema: z.object({ dataset_id: datasetId }) }, done('profiled')),
  tool({ name: 'clean_dataset', description: 'Clean a dataset into a new version.', schema: z.object({ dataset_id: datasetId, rules: z.array(z.string()).default([]) }) }, done('cleaned')),
  tool({ name: 'ingest_dataset', description: 'Ingest a dataset from an approved source system.', schema: z.object({ source: z.string(), dataset_id: datasetId }) }, done('ingested')),
  tool(
    {
      name: 'export_raw_data',
      description: 'Export raw, unmasked rows of a dataset outside the platform.',
      schema: z.object({ dataset_id: datasetId, destination: z.string(), contains_pii: z.boolean().default(false) }),
      approval: requireApproval('export'),
    },
    done('exported'),
  ),
  tool({ name: 'train_model', description: 'Train a model on a dataset.', schema: z.object({ dataset_id: datasetId, algorithm: z.string() }) }, done('trained')),
  tool({ name: 'tune_hyperparameters', description: 'Run a hyperparameter search.', schema: z.object({ model_id: modelId, trials: z.number().int().min(1).max(1000) }) }, done('tuned')),
  tool({ name: 'register_model', description: 'Register a trained model version.', schema: z.object({ model_id: modelId }) }, done('registered')),
  tool({ name: 'schedule_job', description: 'Schedule a recurring job.', schema: z.object({ job: z.string(), cron: z.string() }) }, done('scheduled')),
  tool({ name: 'run_batch', description: 'Run a batch job over a dataset.', schema: z.object({ job: z.string(), dataset_id: datasetId }) }, done('batch run')),
  tool({ name: 'evaluate_model', description: 'Evaluate a model on a holdout set.', schema: z.object({ model_id: modelId }) }, done('evaluated')),
  tool({ name: 'fairness_audit', description: 'Run the fairness audit of a model.', schema: z.object({ model_id: modelId }) }, done('audited')),
  tool({ name: 'grade_with_llm', description: 'Grade evaluation outputs with a language model.', schema: z.object({ model_id: modelId }) }, done('graded')),
  tool(
    {
      name: 'deploy_serving',
      description: 'Deploy a model to a serving environment.',
      schema: z.object({ model_id: modelId, env }),
      approval: requireApproval('deploy'),
    },
    done('deployed'),
  ),
  tool(
    {
      name: 'promote_challenger',
      description: 'Promote a challenger model over the champion.',
      schema: z.object({ model_id: modelId, env }),
      approval: requireApproval('deploy'),
    },
    done('promoted'),
  ),
  tool({ name: 'rollback_serving', description: 'Roll a serving environment back to the previous model.', schema: z.object({ env }) }, done('rolled back')),
  tool({ name: 'monitor_drift', description: 'Check a deployed model for drift.', schema: z.object({ model_id: modelId }) }, done('monitored')),
  tool({ name: 'generate_report', description: 'Generate a compliance report.', schema: z.object({ period: z.string() }) }, done('reported')),
  tool({ name: 'web_fetch', description: 'Fetch a page from the internet.', schema: z.object({ url: z.string().url() }) }, done('fetched')),
  tool({ name: 'send_email', description: 'Send an e-mail notification.', schema: z.object({ to: z.string(), subject: z.string() }) }, done('sent')),
];
