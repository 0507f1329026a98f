/**
 * The stores of the decision path on PostgreSQL, wired together as one server uses them: flags (in memory, told of
 * changes), approvals (each transition and its audit rows in one transaction), sign-in, the audit recorder, and the
 * engine's ports over them. What a server on PostgreSQL is built from; the tests and bench/postgres.ts use it as two or
 * more servers on one database.
 */
import type pg from 'pg';
import { pgDatabase } from '@/db/pg/client';
import { approvalRequestOf } from '@/lib/approvals/store';
import { DEFAULT_APPROVAL_TTL_SECONDS } from '@/lib/approvals/gates';
import { PgApprovalStore } from '@/lib/approvals/pg-store';
import { approvalDenial, approvalSecurityEvent } from '@/lib/audit/approval-events';
import { PgAuditRecorder, type PgRecorderOptions } from '@/lib/audit/pg-recorder';
import { PgAuthStore } from '@/lib/auth/pg-store';
import { PgFlagService } from '@/lib/flags/pg-service';
import type { FlagLocks } from '@/lib/flags/resolve';
import type { EnginePorts } from '@/lib/permissions';

export interface PgDecisionStoreOptions {
  pool: pg.Pool;
  env?: Readonly<Record<string, string | undefined>>;
  locks?: FlagLocks;
  /** keys a compliance profile masks (as the audit trail masks them) */
  maskKeys?: ReadonlySet<string>;
  recorder?: Partial<PgRecorderOptions>;
  /** a policy ASK rule may match calls of this tool (the engine then needs their approval state too) */
  mayAsk?(tool: string): boolean;
}

export interface PgDecisionStores {
  flags: PgFlagService;
  approvals: PgApprovalStore;
  auth: PgAuthStore;
  recorder: PgAuditRecorder;
  /** the engine's ports over these stores (an asynchronous engine: decideAsync, checkAsync) */
  ports: EnginePorts;
  stop(): Promise<void>;
}

export async function openPgDecisionStores(options: PgDecisionStoreOptions): Promise<PgDecisionStores> {
  const { pool } = options;
  const maskKeys = options.maskKeys ?? new Set<string>();
  const flags = new PgFlagService({ db: pgDatabase(pool), pool, env: options.env, locks: options.locks });
  await flags.start();
  const recorder = new PgAuditRecorder(pool, {
    revision: () => null,
    logAllDecisions: () => flags.values().get('decision_log_all') === true,
    maskKeys,
    ...options.recorder,
  });
  const approvals = new PgApprovalStore(pool, async (e, tx) => {
    await recorder.recordIn(tx, approvalSecurityEvent(e));
    const denial = approvalDenial(e, maskKeys);
    if (denial) await recorder.appendDenialIn(tx, denial);
  });
  const auth = new PgAuthStore(pool, (e) => recorder.record({ kind: 'auth', type: e.type, actor: e.by, outcome: 'succeeded', target: e.target, detail: e.detail }).then(() => undefined));
  const ports: EnginePorts = {
    async: true,
    flagValues: () => flags.values(),
    approvalState: (ctx, gate) => (gate || options.mayAsk?.(ctx.tool) ? approvals.stateFor(ctx.agent, ctx.tool, ctx.arguments, gate?.expiresInSeconds ?? DEFAULT_APPROVAL_TTL_SECONDS) : undefined),
    recorder,
    requestApproval: async (ctx, result) => (await approvals.request(approvalRequestOf(ctx, result))).id,
    consumeApproval: (id) => approvals.consume(id),
  };
  return { flags, approvals, auth, recorder, ports, stop: () => flags.stop() };
}
