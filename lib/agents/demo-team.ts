/**
 * The demo's simulated agent team: a few agents calling their tools through the engine every few seconds, so that a
 * newcomer sees allowed calls, denials from every source and pending approvals within a minute. The deployer's and
 * the compliance agent's gated calls wait for an operator (a production rollback for two of them); approved ones run
 * on the agent's next turn. A hook (config/hooks.yaml) rewrites the deployer's mail before it is decided.
 */
import type { App } from '@/lib/app';
import { ApprovalRequired, PermissionDenied } from '@/lib/permissions';
import { PLATFORM_TOOLS } from './platform-tools';
import { AgentRuntime } from './runtime';
import { messageOf, isError } from '@/lib/errors';

type Step = { agent: string; tool: string; args: () => Record<string, unknown> };

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
const model = () => `m-${40 + Math.floor(Math.random() * 5)}`;
const dataset = () => pick(['claims-2026q3', 'loans-eu', 'patients-triage', 'fraud-labels']);

/** Each step, with the source it usually exercises. */
const STEPS: readonly Step[] = [
  { agent: 'data_cleaner', tool: 'profile_dataset', args: () => ({ dataset_id: dataset() }) }, // allowed
  { agent: 'data_cleaner', tool: 'clean_dataset', args: () => ({ dataset_id: dataset(), rules: ['dedupe'] }) }, // allowed
  { agent: 'data_cleaner', tool: 'deploy_serving', args: () => ({ model_id: model(), env: 'prod' }) }, // agent_allowlist
  { agent: 'trainer', tool: 'train_model', args: () => ({ dataset_id: dataset(), algorithm: 'xgboost' }) }, // allowed
  { agent: 'trainer', tool: 'tune_hyperparameters', args: () => ({ model_id: model(), trials: 500 }) }, // policy
  { agent: 'trainer', tool: 'export_raw_data', args: () => ({ dataset_id: dataset(), destination: 's3://scratch' }) }, // agent_allowlist
  { agent: 'evaluator', tool: 'evaluate_model', args: () => ({ model_id: model() }) }, // allowed
  { agent: 'evaluator', tool: 'grade_with_llm', args: () => ({ model_id: model() }) }, // flag (experiment off)
  { agent: 'deployer', tool: 'deploy_serving', args: () => ({ model_id: model(), env: pick(['staging', 'prod']) }) }, // hitl
  { agent: 'deployer', tool: 'monitor_drift', args: () => ({ model_id: model() }) }, // allowed
  { agent: 'compliance_agent', tool: 'export_raw_data', args: () => ({ dataset_id: dataset(), destination: 'auditor-sftp', contains_pii: true }) }, // policy 950
  { agent: 'compliance_agent', tool: 'export_raw_data', args: () => ({ dataset_id: 'loans-eu-masked', destination: 'auditor-sftp', contains_pii: false }) }, // hitl
  { agent: 'shadow_agent', tool: 'web_fetch', args: () => ({ url: 'https://example.com/exfiltrate' }) }, // unknown agent
  { agent: 'deployer', tool: 'rollback_serving', args: () => ({ env: 'prod' }) }, // hitl, two people (gates.yaml prod-rollback)
  // The drop-bcc hook (hooks.yaml) removes the blind copy before anything decides; mail outside the company then waits
  // for a person (gates.yaml external-mail), who sees the arguments without it.
  {
    agent: 'deployer',
    tool: 'send_email',
    args: () => ({ to: 'model-risk@partner-insurer.example', subject: `Model ${model()} promoted`, bcc: 'archive@elsewhere.example' }),
  }, // hook drop-bcc, then hitl external-mail
];

export interface TeamEvent {
  agent: string;
  tool: string;
  outcome: 'allowed' | 'denied' | 'asked' | 'ran-after-approval' | 'rejected' | 'expired' | 'error';
  detail: string;
}

export class DemoTeam {
  private readonly runtimes = new Map<string, AgentRuntime>();
  private timer: NodeJS.Timeout | undefined;
  private tick = 0;

  constructor(
    private readonly app: Pick<App, 'decisions' | 'approvals'>,
    private readonly onEvent: (e: TeamEvent) => void = () => {},
  ) {}

  private runtime(agent: string): AgentRuntime {
    let r = this.runtimes.get(agent);
    if (!r) {
      r = new AgentRuntime(this.app.decisions, this.app.approvals, agent, PLATFORM_TOOLS);
      this.runtimes.set(agent, r);
    }
    return r;
  }

  /** One turn: every agent first settles its approved calls, then the team makes a few calls. */
  async turn(calls = 3): Promise<void> {
    for (const r of this.runtimes.values()) {
      for (const o of await r.resume()) {
        if (o.status === 'ran') this.onEvent({ agent: r.agent, tool: o.tool, outcome: 'ran-after-approval', detail: o.approvalId });
        else if (o.status === 'failed') this.onEvent({ agent: r.agent, tool: o.tool, outcome: 'error', detail: o.error });
        // approved, its secrets not stored: the call waits for the agent to make it again
        else if (o.status === 'call_again') this.onEvent({ agent: r.agent, tool: o.tool, outcome: 'asked', detail: o.reason });
        else this.onEvent({ agent: r.agent, tool: o.tool, outcome: o.status, detail: o.reason });
      }
    }
    for (let i = 0; i < calls; i++) {
      // Walk the steps in order first, so every source shows up in the first minute; then at random.
      const step = this.tick < STEPS.length ? STEPS[this.tick]! : pick(STEPS);
      this.tick++;
      await this.run(step);
    }
  }

  private async run(step: Step): Promise<void> {
    try {
      await this.runtime(step.agent).call(step.tool, step.args(), `tc_${Date.now().toString(36)}_${this.tick}`);
      this.onEvent({ agent: step.agent, tool: step.tool, outcome: 'allowed', detail: 'ran' });
    } catch (e) {
      if (isError(e, PermissionDenied)) this.onEvent({ agent: step.agent, tool: step.tool, outcome: 'denied', detail: e.result.ruleSource });
      else if (isError(e, ApprovalRequired)) this.onEvent({ agent: step.agent, tool: step.tool, outcome: 'asked', detail: e.approvalId });
      else this.onEvent({ agent: step.agent, tool: step.tool, outcome: 'error', detail: messageOf(e) });
    }
  }

  start(intervalMs = 4000): void {
    if (this.timer) return;
    void this.turn();
    this.timer = setInterval(() => void this.turn(), intervalMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
