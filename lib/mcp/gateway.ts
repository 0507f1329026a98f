/**
 * The MCP gateway: one MCP server in front of the upstream servers of config/mcp.yaml, every tool call decided by the
 * engine before anything reaches an upstream.
 *
 * - tools/list: the union of the upstreams' tools, named `<server><separator><tool>`, with their schemas and
 *   annotations. A tool the agent can never use is left out; a tool that needs a person's approval says so in its
 *   description (lib/mcp/visibility.ts). `notifications/tools/list_changed` when that list changes (the policy, the
 *   flags, an upstream's tools).
 * - tools/call: decided and recorded (agent = the session's, tool = the namespaced name, arguments = the call's, the
 *   tool's annotations). DENY: an error result that says what was refused, by which rule and why, and the decision id;
 *   the upstream never sees the call. ASK: `return` answers at once with the approval to wait for; `wait` holds the
 *   call (with progress notifications) until an operator decides or `approval_wait` is up. ALLOW: forwarded with the
 *   arguments the hooks left, its outcome reported to the after_tool_call hooks. A decision that cannot be made or
 *   recorded refuses the call: it is never forwarded.
 * - resources and prompts pass through, namespaced; reading one is decided as the tool `<server>__read_resource`
 *   (arguments: uri), getting a prompt as `<server>__get_prompt` (arguments: name, arguments). A resource URI that two
 *   servers list is refused rather than served by one of them.
 * - pins (issue 42): what each upstream lists is reported to the pins (lib/mcp/pins) before it is listed or called: a
 *   tool never seen is pinned as it is (or held, when a profile holds new tools), a tool whose definition differs from
 *   its pin is held. A call names the definition the gateway sees, so the engine refuses a held one (`mcp_pin`): it
 *   leaves tools/list (clients hear list_changed) until an operator accepts the new definition.
 * - names that cannot impersonate (lib/mcp/names.ts): a tool whose name holds the separator, whose listed name is
 *   another server's tool's, or that is named like the gateway's own decisions is not listed, and recorded once.
 * - arguments kept exactly or refused (lib/mcp/arguments.ts): a tools/call whose arguments hold `__proto__`,
 *   `constructor` or `prototype` is answered with invalid params (-32602) before anything decides it.
 *
 * One McpGateway serves any number of sessions (each with its own decider: its agent); the upstream connections are
 * shared (UpstreamPool).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import type { RequestTaskStore } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { messageOf, isError } from '@/lib/errors';
import type { McpToolRef, ToolAnnotations } from '@/lib/permissions';
import { ANNOTATION_HINTS } from '@/lib/permissions/annotations';
import { refusedToolCall } from './arguments';
import { askModeOf, type McpConfig, type McpServerConfig } from './config';
import type { Answer, GatewayDecider, ToolQuestion } from './decider';
import { GET_PROMPT, nameTools, READ_RESOURCE, type RefusedTool } from './names';
import { definitionOf, type PinnedDefinition } from './pins/definition';
import { UpstreamUnavailable, type Upstream, type UpstreamPool } from './upstreams';

export { GET_PROMPT, READ_RESOURCE } from './names';

export const GATEWAY_INFO = { name: 'swarm-permissions', version: '1' };

export interface GatewayOptions {
  /** how often a held call asks whether its approval was decided (ms; default 1 s) */
  pollMs?: number;
  /** how often a session asks whether its tool list changed with the policy or the flags (ms; default 1 s) */
  watchMs?: number;
}

/** One upstream tool as the agent sees it. */
interface ListedTool {
  name: string;
  upstream: Upstream;
  tool: Tool;
}

/** The tools of the connected upstreams by their listed names, and those not listed (and why), for one pool version. */
interface Catalog {
  version: number;
  tools: Map<string, ListedTool>;
  refused: RefusedTool<Upstream>[];
}

/** The canonical definition of each upstream tool object (an upstream's list is new objects each time it changes). */
const definitions = new WeakMap<Tool, PinnedDefinition>();
function definitionOfTool(tool: Tool): PinnedDefinition {
  let d = definitions.get(tool);
  if (!d) definitions.set(tool, (d = definitionOf(tool)));
  return d;
}

/** The upstream tool a listed one is, for the engine: its server, its own name and the hash of its definition. */
const refOf = (t: ListedTool): McpToolRef => ({ server: t.upstream.config.id, tool: t.tool.name, sha256: definitionOfTool(t.tool).sha256 });

/**
 * The gateway's MCP server: every message a transport reads is looked at before the server handles it, and a tools/call
 * whose arguments cannot be kept exactly is answered with invalid params (lib/mcp/arguments.ts) instead of being
 * parsed (the request schema would drop a `__proto__` key) and decided without it.
 */
class GatewayServer extends Server {
  override async connect(transport: Transport): Promise<void> {
    const start = transport.start.bind(transport);
    // The protocol sets the transport's onmessage, then starts it: the guard goes in front of it at the start.
    transport.start = async () => {
      const deliver = transport.onmessage;
      transport.onmessage = (message, extra) => {
        const refusal = refusedToolCall(message);
        if (!refusal) return deliver?.(message, extra);
        void transport.send(refusal, { relatedRequestId: refusal.id }).catch(() => undefined);
      };
      return start();
    };
    return super.connect(transport);
  }
}

type Extra = {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification: (n: ServerNotification) => Promise<void>;
  taskStore?: RequestTaskStore;
};

/** How a held call is kept: the request's own wait (`approval_wait`), or a task's (until the operator decides). */
interface Holding {
  /** how long to wait for the decision (ms) */
  waitMs: number;
  /** hears that the call is held for an approval */
  onHold?: (asked: Answer) => void;
  /** false once nobody wants the answer any more (a cancelled task) */
  wanted?: () => Promise<boolean>;
}

/** How long a task-augmented call may wait for a person when the client gives no TTL: a gate's default expiry. */
const TASK_WAIT_MS = 24 * 60 * 60 * 1000;

export class McpGateway {
  private readonly pollMs: number;
  private readonly watchMs: number;
  private catalogMemo: Catalog | undefined;
  /** the observation of the upstreams' lists at one pool version (reported to the pins once, by the first to ask) */
  private observing: { version: number; done: Promise<void> } | undefined;

  constructor(
    readonly pool: UpstreamPool,
    options: GatewayOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 1_000;
    this.watchMs = options.watchMs ?? 1_000;
  }

  private get config(): McpConfig {
    return this.pool.sync();
  }

  /** Every tool of every connected upstream, by its namespaced name, and the tools whose names are refused. */
  private catalog(): Catalog {
    const config = this.config;
    const version = this.pool.version;
    if (this.catalogMemo?.version === version) return this.catalogMemo;
    const { listed, refused } = nameTools(this.pool.live().map((upstream) => ({ upstream, tools: upstream.tools })), config.separator);
    this.catalogMemo = { version, tools: new Map(listed.map((t) => [t.name, t])), refused };
    return this.catalogMemo;
  }

  /**
   * Report what every connected upstream lists now to the pins (through this decider), once per version of the pool:
   * first sights are pinned, changed definitions held and refused names recorded before anything is listed or called.
   * A report that fails is tried again by the next one to ask (meanwhile the list and the calls fail closed).
   */
  private observed(decider: GatewayDecider): Promise<void> {
    const catalog = this.catalog();
    if (this.observing?.version === catalog.version) return this.observing.done;
    const done = (async () => {
      for (const upstream of this.pool.live()) {
        const tools = [...catalog.tools.values()].filter((t) => t.upstream === upstream).map((t) => t.tool);
        const refused = catalog.refused.filter((r) => r.upstream === upstream).map((r) => ({ tool: r.tool, reason: r.reason, message: r.message }));
        await decider.observe({ server: upstream.config.id, tools, refused });
      }
    })();
    const observing = { version: catalog.version, done };
    this.observing = observing;
    done.catch(() => {
      if (this.observing === observing) this.observing = undefined;
    });
    return done;
  }

  /** The tools this session's agent is shown, with how each is described. */
  private async visibleTools(decider: GatewayDecider): Promise<Tool[]> {
    await this.observed(decider);
    const listed = [...this.catalog().tools.values()];
    const { tools } = await decider.visibility(listed.map((t) => ({ tool: t.name, annotations: annotationsOf(t.tool), mcp: refOf(t) })));
    const out: Tool[] = [];
    listed.forEach((t, i) => {
      const v = tools[i];
      if (v === 'hidden' || v === undefined) return;
      const note = v === 'gated' ? 'Needs a person\'s approval before it runs (Swarm Permissions).' : undefined;
      out.push({
        ...t.tool,
        name: t.name,
        description: note ? (t.tool.description ? `${note} ${t.tool.description}` : note) : t.tool.description,
        // a call that waits for a person may be made a task (the client polls it instead of holding a request)
        ...(v === 'gated' ? { execution: { ...t.tool.execution, taskSupport: t.tool.execution?.taskSupport === 'required' ? 'required' : 'optional' } } : {}),
      });
    });
    return out;
  }

  /**
   * An MCP server for one session (one client, one agent): connect it to a transport. `close()` it with the session;
   * the upstreams stay.
   */
  session(decider: GatewayDecider): Server {
    this.pool.sync();
    const tasks = new InMemoryTaskStore();
    const server = new GatewayServer(GATEWAY_INFO, {
      capabilities: {
        tools: { listChanged: true },
        resources: { listChanged: true },
        prompts: { listChanged: true },
        // A client that supports tasks may make any call a task: an ASK is then a task that works until a person decides.
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      taskStore: tasks,
      instructions: 'The tools of several MCP servers, each call decided by Swarm Permissions. A refused call says why; a call that needs a person\'s approval says where to get it.',
    });
    let shown: string | undefined;
    let watching: NodeJS.Timeout | undefined;
    let checking = false;
    const listChanged = async () => {
      if (shown === undefined || checking) return;
      checking = true;
      try {
        const now = signature(await this.visibleTools(decider));
        if (now !== shown) {
          shown = now;
          await server.sendToolListChanged();
        }
      } catch {
        // the decision service is unreachable: the list is asked again at the next poll, and every call is refused
      } finally {
        checking = false;
      }
    };
    let initialized = false;
    const offPool = this.pool.onChange(() => {
      void listChanged();
      // An upstream came, went or changed its lists: what the resources and prompts lists hold may have changed too.
      if (!initialized) return;
      void server.sendResourceListChanged().catch(() => {});
      void server.sendPromptListChanged().catch(() => {});
    });
    server.oninitialized = () => {
      initialized = true;
      watching = setInterval(() => void listChanged(), this.watchMs);
      watching.unref();
    };
    server.onclose = () => {
      offPool();
      if (watching) clearInterval(watching);
      tasks.cleanup();
    };

    server.setRequestHandler(ListToolsRequestSchema, async () => {
      const tools = await this.visibleTools(decider).catch((error) => {
        throw new McpError(ErrorCode.InternalError, `Swarm Permissions could not decide which tools to list (${messageOf(error)}).`);
      });
      shown = signature(tools);
      return { tools };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name, arguments: args = {}, task } = request.params;
      if (!task || !extra.taskStore) return this.callTool(decider, name, args, extra, clientName(server));
      return this.callToolAsTask(decider, name, args, { ...extra, taskStore: extra.taskStore }, task.ttl ?? undefined, clientName(server));
    });
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: await this.visibleResources(decider) }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
      const listing = this.pool.live().filter((u) => u.resources.some((r) => r.uri === request.params.uri));
      const upstream = listing[0];
      if (!upstream) throw new McpError(-32002, `There is no resource "${request.params.uri}".`);
      // Two servers list it: which one answers would be an accident of order, so neither does.
      if (listing.length > 1) {
        throw new McpError(
          ErrorCode.InvalidParams,
          `The resource "${request.params.uri}" is listed by more than one MCP server (${listing.map((u) => u.config.id).join(', ')}): it is refused rather than read from one of them. Ask an administrator to remove it from all but one server.`,
        );
      }
      await this.decideOrRefuse(decider, upstream.config, READ_RESOURCE, { uri: request.params.uri });
      return upstream.connected().readResource({ uri: request.params.uri }, { timeout: upstream.config.callTimeoutMs });
    });
    server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: await this.visiblePrompts(decider) }));
    server.setRequestHandler(GetPromptRequestSchema, async (request) => {
      const { upstream, name } = this.split(request.params.name);
      if (!upstream || !upstream.prompts.some((p) => p.name === name)) throw new McpError(ErrorCode.InvalidParams, `There is no prompt "${request.params.name}".`);
      const args = request.params.arguments ?? {};
      await this.decideOrRefuse(decider, upstream.config, GET_PROMPT, { name, arguments: args });
      return upstream.connected().getPrompt({ name, arguments: args }, { timeout: upstream.config.callTimeoutMs });
    });
    return server;
  }

  /** `<server><sep><name>` to its upstream and the upstream's own name. */
  private split(listed: string): { upstream: Upstream | undefined; name: string } {
    const sep = this.config.separator;
    const at = listed.indexOf(sep);
    if (at <= 0) return { upstream: undefined, name: listed };
    return { upstream: this.pool.get(listed.slice(0, at)), name: listed.slice(at + sep.length) };
  }

  private async visibleResources(decider: GatewayDecider) {
    const readable = await this.readableServers(decider, READ_RESOURCE);
    const sep = this.config.separator;
    return this.pool.live().flatMap((u) => (readable.has(u.config.id) ? u.resources.map((r) => ({ ...r, name: `${u.config.id}${sep}${r.name}` })) : []));
  }

  private async visiblePrompts(decider: GatewayDecider) {
    const readable = await this.readableServers(decider, GET_PROMPT);
    const sep = this.config.separator;
    return this.pool.live().flatMap((u) => (readable.has(u.config.id) ? u.prompts.map((p) => ({ ...p, name: `${u.config.id}${sep}${p.name}` })) : []));
  }

  /** The servers whose `<server>__<action>` this agent may ever be allowed. */
  private async readableServers(decider: GatewayDecider, action: string): Promise<Set<string>> {
    const sep = this.config.separator;
    const servers = this.pool.live().map((u) => u.config.id);
    const { tools } = await decider.visibility(servers.map((id) => ({ tool: `${id}${sep}${action}`, annotations: { readOnlyHint: true } })));
    return new Set(servers.filter((_, i) => tools[i] !== 'hidden'));
  }

  /** A read of a resource or a prompt: allowed, or refused with the engine's reason (an ASK is refused too: it says where to approve). */
  private async decideOrRefuse(decider: GatewayDecider, server: McpServerConfig, action: string, args: Record<string, unknown>): Promise<void> {
    const answer = await decider.decide({ tool: `${server.id}${this.config.separator}${action}`, arguments: args, annotations: { readOnlyHint: true } }).catch((error) => {
      throw new McpError(ErrorCode.InternalError, refusedUndecided(error));
    });
    if (answer.decision === 'ALLOW') return;
    throw new McpError(ErrorCode.InvalidRequest, answer.decision === 'ASK' ? askText(answer, decider.consoleUrl, false) : denyText(answer));
  }

  /** tools/call: decide, then forward, refuse or hold. */
  async callTool(decider: GatewayDecider, name: string, args: Record<string, unknown>, extra: Extra, client?: string, holding?: Holding): Promise<CallToolResult> {
    const catalog = this.catalog();
    const listed = catalog.tools.get(name);
    if (!listed) {
      const refused = catalog.refused.find((r) => `${r.upstream.config.id}${this.config.separator}${r.tool}` === name);
      if (refused) return errorResult(`${refused.message} This call was not decided or run.`);
      const { upstream } = this.split(name);
      if (upstream) return errorResult(`The MCP server "${upstream.config.id}" is not connected (${upstream.status().state}); this call was not decided or run. Try again shortly.`);
      throw new McpError(ErrorCode.InvalidParams, `There is no tool "${name}".`);
    }
    try {
      await this.observed(decider);
    } catch (error) {
      return errorResult(refusedUndecided(error));
    }
    const question: ToolQuestion = { tool: name, arguments: args, annotations: annotationsOf(listed.tool), mcp: refOf(listed), ...(client ? { client } : {}) };
    let answer: Answer;
    try {
      answer = await decider.decide(question);
    } catch (error) {
      return errorResult(refusedUndecided(error));
    }
    if (answer.decision === 'ASK') {
      if (!holding && askModeOf(listed.upstream.config, listed.tool.name) === 'return') return errorResult(askText(answer, decider.consoleUrl, true));
      const hold = holding ?? { waitMs: this.config.approvalWaitMs };
      hold.onHold?.(answer);
      const decided = await this.holdForApproval(decider, question, answer, extra, hold);
      if (decided.decision === 'ASK') return errorResult(askText(decided, decider.consoleUrl, true, hold.waitMs));
      answer = decided;
    }
    if (answer.decision === 'DENY') return errorResult(denyText(answer));
    return this.forward(decider, listed, question, answer, extra);
  }

  /**
   * Hold an ASK until the approval is decided (asked again without recording, every poll), the wait is up or the
   * client cancels; then decide once more, recorded: an approved call is allowed once (and its approval used), a
   * rejected or expired one denied.
   */
  private async holdForApproval(decider: GatewayDecider, q: ToolQuestion, asked: Answer, extra: Extra, hold: Holding): Promise<Answer> {
    const started = Date.now();
    const deadline = started + hold.waitMs;
    const token = extra._meta?.progressToken;
    while (Date.now() < deadline && !extra.signal.aborted && (await (hold.wanted?.() ?? true))) {
      if (token !== undefined) {
        await extra
          .sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: Math.round((Date.now() - started) / 1000), total: Math.round(hold.waitMs / 1000), message: `Waiting for a person's approval (${asked.approval_id ?? 'request'}).` },
          })
          .catch(() => {});
      }
      await sleep(Math.min(this.pollMs, deadline - Date.now()), extra.signal);
      let now: Answer;
      try {
        now = await decider.check(q);
      } catch {
        continue; // the service is unreachable for a moment: keep holding; the final decision refuses if it still is
      }
      if (now.decision !== 'ASK') break;
    }
    try {
      return await decider.decide(q);
    } catch (error) {
      return { ...asked, decision: 'DENY', reason: refusedUndecided(error), decision_id: null, rule_source: 'gateway' };
    }
  }

  /**
   * A task-augmented tools/call: answered at once with a task that works while the call is decided, held for a person's
   * approval if it asks (the task's status says so), and run; its result is the call's. A cancelled task stops waiting.
   */
  private async callToolAsTask(
    decider: GatewayDecider,
    name: string,
    args: Record<string, unknown>,
    extra: Extra & { taskStore: RequestTaskStore },
    ttl: number | undefined,
    client: string | undefined,
  ) {
    const store = extra.taskStore;
    const task = await store.createTask({ ttl: ttl ?? TASK_WAIT_MS, pollInterval: this.pollMs });
    const running = new AbortController();
    const wanted = async () => {
      const now = await store.getTask(task.taskId).catch(() => undefined);
      return now !== undefined && now.status !== 'cancelled';
    };
    const holding: Holding = {
      waitMs: ttl ?? TASK_WAIT_MS,
      wanted,
      onHold: (asked) => void store.updateTaskStatus(task.taskId, 'working', `Waiting for a person's approval (${asked.approval_id ?? 'requested'}): ${askText(asked, decider.consoleUrl, false)}`).catch(() => {}),
    };
    void (async () => {
      let result: CallToolResult;
      try {
        result = await this.callTool(decider, name, args, { ...extra, signal: running.signal, _meta: {} }, client, holding);
      } catch (error) {
        result = errorResult(messageOf(error));
      }
      if (await wanted()) await store.storeTaskResult(task.taskId, result.isError ? 'failed' : 'completed', result).catch(() => {});
    })();
    return { task };
  }

  private async forward(decider: GatewayDecider, listed: ListedTool, q: ToolQuestion, answer: Answer, extra: Extra): Promise<CallToolResult> {
    const runWith = answer.arguments ?? q.arguments;
    const report = (outcome: 'succeeded' | 'failed', detail: { result?: unknown; error?: string }) =>
      void decider.finished({ ...q, arguments: runWith, decisionId: answer.decision_id, outcome, ...detail }).catch(() => {});
    let client;
    try {
      client = listed.upstream.connected();
    } catch (error) {
      report('failed', { error: messageOf(error) });
      return errorResult(`${messageOf(error)} The call was allowed (decision ${answer.decision_id}) but did not run.`);
    }
    const token = extra._meta?.progressToken;
    try {
      const result = (await client.callTool({ name: listed.tool.name, arguments: runWith }, undefined, {
        timeout: listed.upstream.config.callTimeoutMs,
        signal: extra.signal,
        ...(token !== undefined
          ? { onprogress: (p) => void extra.sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } }).catch(() => {}), resetTimeoutOnProgress: true }
          : {}),
      })) as CallToolResult;
      if (result.isError) report('failed', { error: textOf(result) });
      else report('succeeded', { result: result.structuredContent ?? result.content });
      return result;
    } catch (error) {
      report('failed', { error: messageOf(error) });
      if (isError(error, UpstreamUnavailable)) return errorResult(`${error.message} The call was allowed (decision ${answer.decision_id}) but did not run.`);
      const code = error instanceof McpError ? error.code : ErrorCode.InternalError;
      if (code === ErrorCode.RequestTimeout || code === ErrorCode.ConnectionClosed) {
        return errorResult(`The MCP server "${listed.upstream.config.id}" did not answer (${messageOf(error)}); the call may or may not have run (decision ${answer.decision_id}).`);
      }
      throw new McpError(code, `The MCP server "${listed.upstream.config.id}" answered with an error: ${messageOf(error)}`);
    }
  }
}

/** A tool's annotations as the engine reads them: the hints the upstream declared (the specification's defaults apply to the rest). */
export function declaredAnnotations(a: Tool['annotations']): ToolAnnotations {
  const out: { -readonly [K in keyof ToolAnnotations]: boolean } = {};
  for (const k of ANNOTATION_HINTS) if (typeof a?.[k] === 'boolean') out[k] = a[k];
  return out;
}

const annotationsOf = (tool: Tool): ToolAnnotations => declaredAnnotations(tool.annotations);

/** The client of a session as it named itself at initialize (`Claude Desktop 1.2`), if it did. */
function clientName(server: Server): string | undefined {
  const info = server.getClientVersion();
  if (!info?.name) return undefined;
  return `${info.title ?? info.name}${info.version ? ` ${info.version}` : ''}`.slice(0, 200);
}

function signature(tools: readonly Tool[]): string {
  return JSON.stringify(tools.map((t) => [t.name, t.description ?? '']));
}

function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

function denyText(a: Answer): string {
  return `Refused by Swarm Permissions: ${a.reason} (rule ${a.rule_source}${a.decision_id ? `, decision ${a.decision_id}` : ''}). The call did not run.`;
}

function askText(a: Answer, consoleUrl: string | undefined, retry: boolean, waitedMs?: number): string {
  const where = `${consoleUrl ? consoleUrl.replace(/\/+$/, '') : ''}/approvals${a.approval_id ? `?request=${encodeURIComponent(a.approval_id)}` : ''}`;
  const waited = waitedMs ? ` No one decided within ${Math.round(waitedMs / 1000)} s.` : '';
  return (
    `This call needs a person's approval (approval ${a.approval_id ?? 'requested'}, rule ${a.rule_source}): ${a.reason}${waited} ` +
    `An operator can decide it at ${where}.${retry ? ' Once it is approved, make the same call again: it runs once.' : ''} The call did not run.`
  );
}

function refusedUndecided(error: unknown): string {
  return `Swarm Permissions could not decide this call (${messageOf(error)}); it is refused, as every call is when the decision cannot be made or recorded. The call did not run.`;
}

function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join(' ').slice(0, 2000) || 'the tool reported an error';
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
