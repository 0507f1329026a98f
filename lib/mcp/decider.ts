/**
 * Where the MCP gateway gets its decisions: in process, from the application (the server's /mcp endpoint, or
 * `swarm mcp serve` on a local database), or over REST from a running server (`swarm mcp serve` with SWARM_URL and the
 * agent's token). Either way the answer has the check API's shape, and anything that goes wrong is thrown: the
 * gateway refuses the call (fail closed).
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { App } from '@/lib/app';
import { checkAnswer, toolInput } from '@/lib/decisions/check';
import type { McpToolRef, Principal, ToolAnnotations } from '@/lib/permissions';
import { messageOf } from '@/lib/errors';
import { definitionOf, PINNED_FIELDS } from './pins/definition';
import type { RefusedName } from './pins/service';
import { toolVisibility, type ToolToShow, type Visibility } from './visibility';

/** The engine's answer to one call, as the check API gives it. */
export type Answer = ReturnType<typeof checkAnswer>;

export interface ToolQuestion {
  /** the namespaced name, `<server><separator><tool>` */
  tool: string;
  arguments: Record<string, unknown>;
  annotations?: ToolAnnotations;
  /** the MCP client that made the call, as it named itself at initialize */
  client?: string;
  /** the upstream tool and the hash of its definition as the gateway sees it (the engine refuses one not pinned) */
  mcp?: McpToolRef;
}

/** What one upstream lists now, as the gateway reports it to the pins (lib/mcp/pins). */
export interface Observation {
  server: string;
  /** the tools it lists under names the gateway serves */
  tools: readonly Tool[];
  /** the tools whose names the gateway refuses (lib/mcp/names.ts) */
  refused: readonly RefusedName[];
}

export interface FinishedCall extends ToolQuestion {
  decisionId: string | null;
  outcome: 'succeeded' | 'failed';
  result?: unknown;
  error?: string;
}

export interface GatewayDecider {
  /** the agent every call is decided for */
  readonly agent: string;
  /** where an operator decides approvals (shown in an ASK's answer), when known */
  readonly consoleUrl: string | undefined;
  /** decide and record */
  decide(q: ToolQuestion): Promise<Answer>;
  /** the question only: nothing recorded, no approval requested or used */
  check(q: ToolQuestion): Promise<Answer>;
  visibility(tools: readonly ToolToShow[]): Promise<{ revision: string; tools: Visibility[] }>;
  /** an allowed call ran: the after_tool_call hooks hear of it */
  finished(call: FinishedCall): Promise<void>;
  /** what an upstream lists now: first sights pinned (or held), changed definitions held, refused names recorded */
  observe(o: Observation): Promise<void>;
}

/** The pinned fields of a tool (what an observation carries over REST). */
const pinnedFields = (t: Tool) => Object.fromEntries(PINNED_FIELDS.flatMap((f) => (t[f] === undefined ? [] : [[f, t[f]]])));

/** Decisions of this process's application, for one agent principal. */
export class InProcessDecider implements GatewayDecider {
  readonly agent: string;

  constructor(
    private readonly app: App,
    private readonly principal: Principal,
    readonly consoleUrl: string | undefined,
  ) {
    if (!principal.agent) throw new Error('The MCP gateway decides for an agent: this principal names none.');
    this.agent = principal.agent;
  }

  /** The engine's input for a call, built as the check API builds it. */
  private input(q: ToolQuestion) {
    return toolInput(this.principal, { agent: this.agent, tool: q.tool, arguments: q.arguments, annotations: q.annotations, client: q.client, mcp: q.mcp });
  }

  async observe(o: Observation): Promise<void> {
    await this.app.mcpPins.observe(o.server, o.tools.map((t) => ({ name: t.name, ...definitionOf(t) })), o.refused);
  }

  async decide(q: ToolQuestion): Promise<Answer> {
    return checkAnswer(await this.app.decisions.decide(this.input(q)), false);
  }

  async check(q: ToolQuestion): Promise<Answer> {
    return checkAnswer(await this.app.decisions.authorize(this.input(q)), true);
  }

  visibility(tools: readonly ToolToShow[]) {
    return toolVisibility(this.app, this.principal, this.agent, tools);
  }

  async finished(call: FinishedCall): Promise<void> {
    const context = this.input(call);
    const decisionId = call.decisionId ?? undefined;
    this.app.decisions.finished(
      call.outcome === 'succeeded' ? { context, decisionId, outcome: 'succeeded', result: call.result ?? null } : { context, decisionId, outcome: 'failed', error: call.error ?? 'failed' },
    );
  }
}

/** Decisions of a running server, over its REST API, as one agent's token. */
export class RestDecider implements GatewayDecider {
  private constructor(
    private readonly base: string,
    private readonly token: string,
    readonly agent: string,
    private readonly timeoutMs: number,
  ) {}

  get consoleUrl(): string {
    return this.base;
  }

  /** Ask the server who the token is: it must be an agent's (and `agent`, when given, that agent). */
  static async connect(url: string, token: string, options: { agent?: string; timeoutMs?: number } = {}): Promise<RestDecider> {
    const base = url.replace(/\/+$/, '');
    const timeoutMs = options.timeoutMs ?? 10_000;
    let r: Response;
    try {
      r = await fetch(`${base}/api/v1/auth/me`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      throw new Error(`the permission service at ${base} cannot be reached (${messageOf(error)})`);
    }
    const me = (await r.json().catch(() => ({}))) as { kind?: string; agent?: string | null; error?: { message?: string } };
    if (!r.ok) throw new Error(`the permission service at ${base} refused the token (${r.status}: ${me.error?.message ?? 'no reason given'})`);
    if (me.kind !== 'agent' || !me.agent) throw new Error('SWARM_TOKEN is not an agent\'s token: create one with npx swarm tokens add --agent NAME');
    if (options.agent && options.agent !== me.agent) throw new Error(`SWARM_TOKEN acts as agent "${me.agent}", not "${options.agent}"`);
    return new RestDecider(base, token, me.agent, timeoutMs);
  }

  private async post<T>(path: string, body: unknown): Promise<T> {
    const r = await fetch(`${this.base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const answer = (await r.json().catch(() => ({}))) as T & { error?: { message?: string } };
    if (!r.ok) throw new Error(`the permission service answered ${r.status}: ${answer.error?.message ?? 'no reason given'}`);
    return answer;
  }

  private body(q: ToolQuestion) {
    return {
      agent: this.agent,
      tool: q.tool,
      arguments: q.arguments,
      ...(q.annotations ? { annotations: q.annotations } : {}),
      ...(q.client ? { client: q.client } : {}),
      ...(q.mcp ? { mcp: q.mcp } : {}),
    };
  }

  async observe(o: Observation): Promise<void> {
    await this.post('/api/v1/mcp/observations', { server: o.server, tools: o.tools.map(pinnedFields), refused: o.refused });
  }

  decide(q: ToolQuestion): Promise<Answer> {
    return this.post<Answer>('/api/v1/permissions/check', this.body(q));
  }

  check(q: ToolQuestion): Promise<Answer> {
    return this.post<Answer>('/api/v1/permissions/check', { ...this.body(q), dry_run: true });
  }

  visibility(tools: readonly ToolToShow[]) {
    return this.post<{ revision: string; tools: Visibility[] }>('/api/v1/permissions/tools', { agent: this.agent, tools });
  }

  async finished(call: FinishedCall): Promise<void> {
    await this.post('/api/v1/permissions/finished', {
      ...this.body(call),
      ...(call.decisionId ? { decision_id: call.decisionId } : {}),
      outcome: call.outcome,
      ...(call.outcome === 'succeeded' ? { result: call.result ?? null } : { error: (call.error ?? 'failed').slice(0, 2000) }),
    });
  }
}
