/**
 * @swarm-permissions/client: ask the permission server before an agent's tool call runs, from any Node.js program.
 *
 *   const swarm = new SwarmClient({ url: 'http://127.0.0.1:8000', token: process.env.SWARM_TOKEN });
 *   const d = await swarm.check({ agent: 'deployer', tool: 'deploy_serving', arguments: { model_id: 'm-42' } });
 *   if (d.decision === 'ALLOW') run(d.arguments ?? args);
 *
 * Fails closed: a call that cannot be decided (the server unreachable, too slow, answering 5xx, or refusing the
 * request itself) is answered DENY, never thrown, with the rule source UNREACHABLE or REFUSED and the reason, so that
 * nothing runs undecided. No runtime dependency: the platform's fetch and timers.
 */
import type { Approval, CheckAnswer, CheckRequest, FinishedRequest, ToolsAnswer } from './wire.js';
import { MAX_BATCH_CHECKS, MAX_WAIT_SECONDS } from './wire.js';

export * from './wire.js';

/** The rule source of a call refused because the server could not be reached, did not answer in time or failed (5xx). */
export const UNREACHABLE = 'client:unreachable';
/** The rule source of a call refused because the server refused the request itself (4xx: a token, an agent, a body). */
export const REFUSED = 'client:refused';

export interface SwarmClientOptions {
  /** the server's address (default: the environment's SWARM_URL) */
  url?: string;
  /** the agent's API token (default: SWARM_TOKEN) */
  token?: string;
  /** the agent the calls are made as, when a call names none (default: SWARM_AGENT) */
  agent?: string;
  /** how long one request may take, in ms (default 5,000) */
  timeoutMs?: number;
  /** how many times a request is tried again after a RETRY answer (503 with Retry-After) or a lost connection (default 3) */
  retries?: number;
  /** where people decide approvals, for the links the adapters show (default: `url`) */
  consoleUrl?: string;
  /** the fetch to use (default: globalThis.fetch) */
  fetch?: typeof fetch;
}

/** A tool call as an agent framework has it. */
export interface ToolCall {
  tool: string;
  arguments?: Record<string, unknown>;
  /** the framework's own id of the call: it becomes the audit row's tool_call_id */
  toolCallId?: string;
  /** default: the client's agent */
  agent?: string;
  annotations?: CheckRequest['annotations'];
  /** decide without consequences: nothing recorded, no approval requested or used */
  dryRun?: boolean;
}

/** How an ASK is met: held until a person decides (`wait`), or answered at once (`return`: the caller stops the run). */
export type AskMode = 'wait' | 'return';

export interface DecideOptions {
  /** default 'wait' */
  onAsk?: AskMode;
  /** how long a call is held for a person's decision, ms (default 10 minutes) */
  waitMs?: number;
  /** ends the wait (the run was cancelled): the call is then refused */
  signal?: AbortSignal;
  /** told once when the call is held for a person, with the link to the request */
  onHold?: (answer: CheckAnswer, link: string) => void;
}

const DEFAULT_WAIT_MS = 10 * 60_000;

/** The environment, where there is one (a browser bundle has none). */
const env = (name: string): string | undefined => (typeof process === 'undefined' ? undefined : process.env?.[name]) || undefined;

/** An answer of the client's own: nothing was decided by the server, so nothing may run. */
function refusal(ruleSource: typeof UNREACHABLE | typeof REFUSED, reason: string): CheckAnswer {
  return { decision_id: null, decision: 'DENY', rule_source: ruleSource, reason, approval_id: null, recorded: false, arguments_changed_by: [], arguments: null, hooks: [], trace: [] };
}

/** What the model reads in place of a tool's result when its call is not run (every adapter's refusal). */
export interface Refusal {
  refused: true;
  decision: 'DENY' | 'ASK';
  rule_source: string;
  reason: string;
  decision_id: string | null;
  /** the approval request a person decides (ASK) */
  approval_id?: string;
  approval_url?: string;
}

/** The refusal of a call that was not run: the rule, the reason and the decision, or the approval to wait for. */
export function refusalOf(answer: CheckAnswer, client: SwarmClient): Refusal {
  return {
    refused: true,
    decision: answer.decision === 'ASK' ? 'ASK' : 'DENY',
    rule_source: answer.rule_source,
    reason: answer.decision === 'ASK' ? `Waiting for a person's approval: ${answer.reason}` : answer.reason,
    decision_id: answer.decision_id,
    ...(answer.approval_id ? { approval_id: answer.approval_id, approval_url: client.approvalLink(answer.approval_id) } : {}),
  };
}

/** What went wrong with a request, said once for the refusal: an Error carrying the rule source and the status. */
type Failure = Error & { readonly swarmFailure: true; readonly ruleSource: typeof UNREACHABLE | typeof REFUSED; readonly status?: number };

function failure(ruleSource: typeof UNREACHABLE | typeof REFUSED, message: string, status?: number): Failure {
  return Object.assign(new Error(message), { swarmFailure: true as const, ruleSource, ...(status === undefined ? {} : { status }) });
}

/** Recognised by what it carries, whichever copy of this module made it. */
const isFailure = (error: unknown): error is Failure => (error as Partial<Failure> | null)?.swarmFailure === true;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

export class SwarmClient {
  readonly url: string;
  readonly agent: string | undefined;
  readonly consoleUrl: string;
  private readonly token: string;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly fetch: typeof fetch;

  constructor(options: SwarmClientOptions = {}) {
    const url = options.url ?? env('SWARM_URL');
    if (!url) throw new Error('SwarmClient: give the server\'s address (url, or SWARM_URL).');
    const token = options.token ?? env('SWARM_TOKEN');
    if (!token) throw new Error('SwarmClient: give the agent\'s API token (token, or SWARM_TOKEN).');
    this.url = url.replace(/\/+$/, '');
    this.token = token;
    this.agent = options.agent ?? env('SWARM_AGENT');
    this.consoleUrl = (options.consoleUrl ?? this.url).replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.retries = Math.max(0, options.retries ?? 3);
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** Where a person decides this approval request. */
  approvalLink(approvalId: string): string {
    return `${this.consoleUrl}/approvals?request=${encodeURIComponent(approvalId)}`;
  }

  /** Decide one tool call: ALLOW, DENY or ASK. Never throws: what cannot be decided is a DENY (UNREACHABLE, REFUSED). */
  async check(call: ToolCall): Promise<CheckAnswer> {
    const body = this.request(call);
    if (typeof body === 'string') return refusal(REFUSED, body);
    try {
      return await this.send<CheckAnswer>('POST', '/api/v1/permissions/check', body);
    } catch (error) {
      return this.refused(error, call.tool);
    }
  }

  /** Decide up to 1,000 tool calls in one transaction, answered in order. Never throws: each undecidable call is a DENY. */
  async checkBatch(calls: readonly ToolCall[]): Promise<CheckAnswer[]> {
    if (calls.length === 0) return [];
    if (calls.length > MAX_BATCH_CHECKS) return calls.map(() => refusal(REFUSED, `A batch holds at most ${MAX_BATCH_CHECKS} calls; this one had ${calls.length}. Nothing was decided.`));
    const checks: CheckRequest[] = [];
    for (const call of calls) {
      const body = this.request(call);
      if (typeof body === 'string') return calls.map(() => refusal(REFUSED, body));
      checks.push(body);
    }
    try {
      return (await this.send<{ results: CheckAnswer[] }>('POST', '/api/v1/permissions/check/batch', { checks })).results;
    } catch (error) {
      const answer = this.refused(error, `${calls.length} calls`);
      return calls.map(() => answer);
    }
  }

  /**
   * Decide a call and, for an ASK, meet it as `onAsk` says: `wait` holds it until a person decides on the console
   * (or `waitMs` is up, or `signal` aborts), then decides it once more: an approved call is ALLOW (its approval used,
   * exactly once), a rejected or expired one DENY, one still undecided ASK.
   */
  async decide(call: ToolCall, options: DecideOptions = {}): Promise<CheckAnswer> {
    const first = await this.check(call);
    if (first.decision !== 'ASK' || (options.onAsk ?? 'wait') === 'return' || !first.approval_id) return first;
    options.onHold?.(first, this.approvalLink(first.approval_id));
    const outcome = await this.waitForApproval(first.approval_id, { waitMs: options.waitMs ?? DEFAULT_WAIT_MS, signal: options.signal });
    if (options.signal?.aborted) return refusal(REFUSED, `The run was cancelled while ${call.tool} waited for a person's approval (${first.approval_id}); it was not run.`);
    if (outcome?.status === 'pending') return first;
    return this.check(call);
  }

  /**
   * An approval request's outcome: asked with the server's long poll (at most a minute a request) until it is no
   * longer pending, `waitMs` is up or `signal` aborts. The request as it stands then; undefined when it could not be
   * read (the server unreachable all along, or the request unknown to this token).
   */
  async waitForApproval(approvalId: string, options: { waitMs?: number; signal?: AbortSignal } = {}): Promise<Approval | undefined> {
    const deadline = Date.now() + (options.waitMs ?? DEFAULT_WAIT_MS);
    let last: Approval | undefined;
    for (let failures = 0; ; ) {
      const left = deadline - Date.now();
      if (options.signal?.aborted) return last;
      const wait = Math.max(0, Math.min(MAX_WAIT_SECONDS, Math.floor(left / 1000)));
      try {
        last = await this.send<Approval>('GET', `/api/v1/approvals/${encodeURIComponent(approvalId)}?wait=${wait}`, undefined, { timeoutMs: wait * 1000 + this.timeoutMs, signal: options.signal, retries: 0 });
        failures = 0;
        if (last.status !== 'pending' || wait === 0) return last;
      } catch (error) {
        if (isFailure(error) && error.status === 404) return undefined;
        if (wait === 0 || options.signal?.aborted) return last;
        // The server is unreachable for a moment: keep waiting, a little longer each time (at most 5 s).
        await sleep(Math.min(5_000, 250 * 2 ** Math.min(failures++, 5)) * (0.5 + Math.random() / 2), options.signal);
      }
    }
  }

  /** One approval request as it stands (undefined: unknown to this token, or the server unreachable). */
  async approval(approvalId: string): Promise<Approval | undefined> {
    try {
      return await this.send<Approval>('GET', `/api/v1/approvals/${encodeURIComponent(approvalId)}`);
    } catch {
      return undefined;
    }
  }

  /**
   * Report that an allowed call ran or failed (the server's after_tool_call hooks hear of it), with the decision id
   * its check answered. Never throws: false when the report could not be delivered.
   */
  async finished(call: ToolCall, report: { decisionId?: string | null; outcome: 'succeeded'; result?: unknown } | { decisionId?: string | null; outcome: 'failed'; error: string }): Promise<boolean> {
    const body = this.request(call);
    if (typeof body === 'string') return false;
    const { dry_run: _dryRun, ...fields } = body;
    const finished: FinishedRequest = {
      ...fields,
      outcome: report.outcome,
      ...(report.decisionId ? { decision_id: report.decisionId } : {}),
      ...(report.outcome === 'succeeded' ? { result: report.result ?? null } : { error: report.error.slice(0, 2000) }),
    };
    try {
      await this.send('POST', '/api/v1/permissions/finished', finished);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Which of these tools the agent may ever use: `hidden` (no arguments could allow it), `gated` (a person's approval
   * is needed) or `open`, by tool name. Throws when it cannot be told (a tool kept is still checked at every call).
   */
  async tools(names: readonly (string | { tool: string; annotations?: CheckRequest['annotations'] })[], agent = this.agent): Promise<Map<string, ToolsAnswer['tools'][number]>> {
    if (!agent) throw new Error('SwarmClient.tools: name the agent (the client\'s agent, or SWARM_AGENT).');
    const tools = names.map((n) => (typeof n === 'string' ? { tool: n } : n));
    const answer = await this.send<ToolsAnswer>('POST', '/api/v1/permissions/tools', { agent, tools });
    return new Map(tools.map((t, i) => [t.tool, answer.tools[i] ?? 'hidden']));
  }

  /** The check body of a call, or why there is none. */
  private request(call: ToolCall): CheckRequest | string {
    const agent = call.agent ?? this.agent;
    if (!agent) return `No agent named for ${call.tool}: give the call's agent, the client's agent, or SWARM_AGENT. It was not run.`;
    return {
      agent,
      tool: call.tool,
      arguments: call.arguments ?? {},
      ...(call.toolCallId ? { tool_call_id: call.toolCallId.slice(0, 200) } : {}),
      ...(call.annotations ? { annotations: call.annotations } : {}),
      ...(call.dryRun ? { dry_run: true } : {}),
    };
  }

  /** The refusal of a call whose request failed. */
  private refused(error: unknown, what: string): CheckAnswer {
    if (isFailure(error)) return refusal(error.ruleSource, `${error.message} ${what} was not run.`);
    return refusal(UNREACHABLE, `The permission server at ${this.url} could not be asked (${(error as Error)?.message ?? String(error)}). ${what} was not run.`);
  }

  /**
   * One request, tried again after a RETRY answer (503 with Retry-After: the server asks for it) or a connection that
   * failed before an answer, with jittered backoff; the answer's JSON, or a Failure saying why there is none.
   */
  private async send<T>(method: 'GET' | 'POST', path: string, body?: unknown, options: { timeoutMs?: number; signal?: AbortSignal; retries?: number } = {}): Promise<T> {
    const retries = options.retries ?? this.retries;
    for (let attempt = 0; ; attempt++) {
      const timeoutMs = options.timeoutMs ?? this.timeoutMs;
      const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])];
      let res: Response;
      try {
        res = await this.fetch(`${this.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${this.token}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.any(signals),
        });
      } catch (error) {
        const timedOut = (error as Error)?.name === 'TimeoutError';
        const cause = timedOut ? `did not answer within ${timeoutMs} ms` : `could not be reached (${causeOf(error)})`;
        if (attempt < retries && !timedOut && !options.signal?.aborted) {
          await sleep(backoff(attempt), options.signal);
          continue;
        }
        throw failure(UNREACHABLE, `The permission server at ${this.url} ${cause}.`);
      }
      const text = await res.text().catch(() => '');
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      if (res.ok) {
        if (json === undefined) throw failure(UNREACHABLE, `The permission server at ${this.url} answered ${res.status} without a JSON body.`);
        return json as T;
      }
      const error = (json as { error?: { code?: string; message?: string; issues?: { path: string; message: string }[] } } | undefined)?.error;
      // (Retry-After in seconds; absent or not a number: the server did not ask for a retry)
      const header = res.headers.get('retry-after');
      const retryAfter = header === null || header.trim() === '' ? NaN : Number(header);
      if (res.status === 503 && (error?.code === 'RETRY' || Number.isFinite(retryAfter)) && attempt < retries) {
        await sleep(Math.min(2_000, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 * (0.5 + Math.random() / 2) : backoff(attempt)), options.signal);
        continue;
      }
      const issues = error?.issues?.length ? ` (${error.issues.map((i) => `${i.path || 'body'}: ${i.message}`).join('; ')})` : '';
      const said = error?.message ? `${error.message}${issues}` : `HTTP ${res.status}`;
      throw failure(res.status >= 500 ? UNREACHABLE : REFUSED, `The permission server refused the request (${res.status}): ${said}`, res.status);
    }
  }
}

/** Full jitter: a random wait up to 100 ms doubled each attempt (at most 2 s). */
const backoff = (attempt: number) => Math.random() * Math.min(2_000, 100 * 2 ** attempt);

/** The code of a failed connection (ECONNREFUSED…), else its message. */
function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error);
}

/**
 * A record of tools by name (the AI SDK's ToolSet, Mastra's tools) without those the agent can never use (its
 * allowlist, its role, a flag that is off, an unconditional DENY): the model is not shown them. When the server cannot
 * tell, every tool is kept (each call is still decided).
 */
export async function withoutHiddenTools<T extends Record<string, unknown>>(tools: T, client: SwarmClient, agent?: string): Promise<Partial<T>> {
  let usable: Map<string, string>;
  try {
    usable = await client.tools(Object.keys(tools), agent);
  } catch {
    return tools;
  }
  return Object.fromEntries(Object.entries(tools).filter(([name]) => usable.get(name) !== 'hidden')) as Partial<T>;
}
