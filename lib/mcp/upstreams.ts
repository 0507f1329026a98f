/**
 * The upstream MCP servers of config/mcp.yaml, connected and kept connected: a stdio server is started as a child
 * process, a Streamable HTTP server is reached at its URL. Each upstream's tools, resources and prompts are listed
 * once connected and again when it says they changed. An upstream that fails or exits is started again with backoff
 * (1 s, doubling, at most 30 s); meanwhile its tools leave the list. A new version of the file is reconciled: servers
 * that left are stopped, new and changed ones started, unchanged ones kept.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { PromptListChangedNotificationSchema, ResourceListChangedNotificationSchema, ToolListChangedNotificationSchema, type Prompt, type Resource, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { messageOf, brand } from '@/lib/errors';
import type { McpConfig, McpServerConfig } from './config';

export type UpstreamState = 'starting' | 'connected' | 'restarting' | 'stopped';

export interface UpstreamStatus {
  id: string;
  shown: string;
  transport: 'stdio' | 'http';
  state: UpstreamState;
  tools: number;
  /** the last failure (a start that failed, an exit, a refused list), with its time */
  lastError: { message: string; at: number } | null;
  restarts: number;
  /** when it entered its state (ms since the epoch) */
  since: number;
}

const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;
/** how much of a stdio upstream's stderr is kept, to say why it exited */
const STDERR_TAIL = 2_000;
const LIST_TIMEOUT_MS = 30_000;

export const GATEWAY_CLIENT_INFO = { name: 'swarm-permissions-gateway', version: '1' };

/** One upstream server and its connection. */
export class Upstream {
  private client: Client | undefined;
  private state: UpstreamState = 'starting';
  private since = Date.now();
  private lastError: UpstreamStatus['lastError'] = null;
  private restarts = 0;
  private backoff = FIRST_BACKOFF_MS;
  private timer: NodeJS.Timeout | undefined;
  private stderrTail = '';
  private generation = 0;
  tools: readonly Tool[] = [];
  resources: readonly Resource[] = [];
  prompts: readonly Prompt[] = [];

  constructor(
    readonly config: McpServerConfig,
    /** anything that changes what this upstream offers (its state, its lists) */
    private readonly changed: () => void,
  ) {}

  /** Connect (again); a failure schedules the next attempt. */
  start(): void {
    const generation = ++this.generation;
    this.enter('starting');
    void this.connect(generation).catch((error) => this.failed(generation, error));
  }

  private async connect(generation: number): Promise<void> {
    const client = new Client(GATEWAY_CLIENT_INFO, { capabilities: {} });
    const transport = this.transport();
    client.onclose = () => this.failed(generation, new Error(this.exitReason()));
    // An upstream's own errors (a malformed line on its stdout) are its problem: kept as its last error, never thrown.
    client.onerror = (error) => {
      this.lastError = { message: messageOf(error), at: Date.now() };
    };
    await client.connect(transport, { timeout: LIST_TIMEOUT_MS });
    if (generation !== this.generation) {
      await client.close().catch(() => {});
      return;
    }
    this.client = client;
    const capabilities = client.getServerCapabilities() ?? {};
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.refresh(generation, 'tools'));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void this.refresh(generation, 'resources'));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void this.refresh(generation, 'prompts'));
    await this.refresh(generation, 'tools');
    if (capabilities.resources) await this.refresh(generation, 'resources');
    if (capabilities.prompts) await this.refresh(generation, 'prompts');
    if (generation !== this.generation) return;
    this.backoff = FIRST_BACKOFF_MS;
    this.enter('connected');
  }

  private transport(): Transport {
    const t = this.config.transport;
    if (t.kind === 'http') return new StreamableHTTPClientTransport(new URL(t.url), { requestInit: { headers: { ...t.headers } } });
    const stdio = new StdioClientTransport({ command: t.command, args: [...t.args], env: { ...defaultEnv(), ...t.env }, cwd: t.cwd, stderr: 'pipe' });
    stdio.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    return stdio;
  }

  private exitReason(): string {
    const last = this.stderrTail.trim().split('\n').slice(-3).join(' ').trim();
    return last ? `the connection closed; its last words: ${last}` : 'the connection closed';
  }

  /** List what the upstream offers (all pages), if this connection is still the current one. */
  private async refresh(generation: number, what: 'tools' | 'resources' | 'prompts'): Promise<void> {
    const client = this.client;
    if (!client || generation !== this.generation) return;
    try {
      if (what === 'tools') this.tools = await allPages((cursor) => client.listTools({ cursor }, { timeout: LIST_TIMEOUT_MS }).then((r) => ({ items: r.tools, next: r.nextCursor })));
      else if (what === 'resources') this.resources = await allPages((cursor) => client.listResources({ cursor }, { timeout: LIST_TIMEOUT_MS }).then((r) => ({ items: r.resources, next: r.nextCursor })));
      else this.prompts = await allPages((cursor) => client.listPrompts({ cursor }, { timeout: LIST_TIMEOUT_MS }).then((r) => ({ items: r.prompts, next: r.nextCursor })));
    } catch (error) {
      this.lastError = { message: `listing its ${what} failed: ${messageOf(error)}`, at: Date.now() };
      if (what === 'tools' && this.state !== 'connected') throw error;
    }
    if (generation === this.generation && this.state === 'connected') this.changed();
  }

  private failed(generation: number, error: unknown): void {
    if (generation !== this.generation || this.state === 'stopped') return;
    this.generation++;
    this.lastError = { message: messageOf(error), at: Date.now() };
    const client = this.client;
    this.client = undefined;
    this.tools = [];
    this.resources = [];
    this.prompts = [];
    void client?.close().catch(() => {});
    this.enter('restarting');
    const delay = this.backoff;
    this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.restarts++;
      this.start();
    }, delay);
    this.timer.unref();
  }

  private enter(state: UpstreamState): void {
    const was = this.state;
    this.state = state;
    this.since = Date.now();
    if (was !== state) this.changed();
  }

  /** Connected: what it offers may be listed and called (its lists are filled while it is still starting). */
  get live(): boolean {
    return this.client !== undefined && this.state === 'connected';
  }

  /** The connected client, or an error that says why there is none. */
  connected(): Client {
    if (this.client && this.state === 'connected') return this.client;
    throw new UpstreamUnavailable(this.config.id, this.state, this.lastError?.message);
  }

  status(): UpstreamStatus {
    return {
      id: this.config.id,
      shown: this.config.shown,
      transport: this.config.transport.kind,
      state: this.state,
      tools: this.tools.length,
      lastError: this.lastError,
      restarts: this.restarts,
      since: this.since,
    };
  }

  async stop(): Promise<void> {
    this.generation++;
    this.enter('stopped');
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    this.tools = [];
    await client?.close().catch(() => {});
  }
}

export class UpstreamUnavailable extends Error {
  static readonly kind = 'UpstreamUnavailable';
  constructor(
    readonly server: string,
    readonly state: UpstreamState,
    readonly lastError: string | undefined,
  ) {
    super(`The MCP server "${server}" is not connected (${state}${lastError ? `: ${lastError}` : ''}).`);
    brand(this, UpstreamUnavailable);
  }
}

/** Every upstream of the configuration in force, reconciled when it changes. */
export class UpstreamPool {
  private readonly upstreams = new Map<string, Upstream>();
  private readonly listeners = new Set<() => void>();
  private config: McpConfig | undefined;
  private closed = false;
  /** bumped whenever anything an upstream offers changes (the gateway's sessions compare it) */
  version = 0;

  constructor(private readonly source: () => McpConfig) {}

  /** Start what the configuration names (and reconcile it with what runs, when it changed since the last call). */
  sync(): McpConfig {
    const config = this.source();
    if (config === this.config || this.closed) return config;
    this.config = config;
    const wanted = new Map(config.servers.map((s) => [s.id, s]));
    for (const [id, upstream] of this.upstreams) {
      const next = wanted.get(id);
      if (!next || !sameServer(next, upstream.config)) {
        this.upstreams.delete(id);
        void upstream.stop();
      }
    }
    for (const server of config.servers) {
      if (this.upstreams.has(server.id)) continue;
      const upstream = new Upstream(server, () => this.bump());
      this.upstreams.set(server.id, upstream);
      upstream.start();
    }
    this.bump();
    return config;
  }

  private bump(): void {
    this.version++;
    for (const l of this.listeners) l();
  }

  /** Hear of every change (an upstream connected or left, a list changed, the file changed); returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get(id: string): Upstream | undefined {
    return this.upstreams.get(id);
  }

  all(): Upstream[] {
    return [...this.upstreams.values()];
  }

  /** The upstreams that are connected now. */
  live(): Upstream[] {
    return this.all().filter((u) => u.live);
  }

  statuses(): UpstreamStatus[] {
    return this.all().map((u) => u.status());
  }

  /** Resolves once every upstream is connected or has failed at least once (or the time is up). */
  async settled(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && this.all().some((u) => u.status().state === 'starting' && u.status().restarts === 0)) {
      await new Promise<void>((resolve) => {
        const off = this.onChange(() => {
          off();
          resolve();
        });
        setTimeout(() => {
          off();
          resolve();
        }, 100).unref();
      });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = this.all();
    this.upstreams.clear();
    await Promise.all(all.map((u) => u.stop()));
  }
}

function sameServer(a: McpServerConfig, b: McpServerConfig): boolean {
  return JSON.stringify(a.transport) === JSON.stringify(b.transport);
}

/** The variables a child process needs to run at all (PATH, HOME, ...), as the SDK gives them when no env is set. */
function defaultEnv(): Record<string, string> {
  const keep = process.platform === 'win32' ? ['APPDATA', 'HOMEDRIVE', 'HOMEPATH', 'LOCALAPPDATA', 'PATH', 'PROCESSOR_ARCHITECTURE', 'SYSTEMDRIVE', 'SYSTEMROOT', 'TEMP', 'USERNAME', 'USERPROFILE'] : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];
  const env: Record<string, string> = {};
  for (const k of keep) {
    const v = process.env[k];
    if (v !== undefined && !v.startsWith('()')) env[k] = v;
  }
  return env;
}

async function allPages<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; next?: string }>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const r = await page(cursor);
    out.push(...r.items);
    if (!r.next) break;
    cursor = r.next;
  }
  return out;
}
