/**
 * config/mcp.yaml: the upstream MCP servers the gateway puts behind the engine.
 *
 *   version: 1
 *   separator: "__"          # a tool is listed as <server><separator><tool>
 *   approval_wait: 10m       # how long an `on_ask: wait` call is held for a person's decision
 *   call_timeout: 60s        # how long an upstream may take to answer one call
 *   servers:
 *     - id: files
 *       command: npx
 *       args: [-y, "@modelcontextprotocol/server-filesystem", /srv/shared]
 *       env: { GITHUB_TOKEN: GITHUB_TOKEN_FOR_MCP }   # the upstream's variable: the variable of ours it is taken from
 *       cwd: /srv
 *       on_ask: wait          # or return (per server, and per tool under `tools:`)
 *       tools: { write_file: { on_ask: return } }
 *     - id: crm
 *       url: https://mcp.example.com/mcp
 *       headers: { Authorization: CRM_MCP_AUTHORIZATION }  # header: the variable holding its value
 *
 * Secrets never live in the file: a value of `env` or `headers` names an environment variable of this process. Pure:
 * text in, a frozen configuration (or ConfigFileError with file:line:column) out.
 */
import { z } from 'zod';
import { durationSchema } from '@/lib/permissions/gates';
import { ConfigFileError, idList, parseYamlConfigLocated, type ConfigIssue } from '@/lib/permissions/yaml-config';

export const ASK_MODES = ['wait', 'return'] as const;
export type AskMode = (typeof ASK_MODES)[number];

const SERVER_ID = /^[a-z][a-z0-9-]{0,39}$/;
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'the name of an environment variable (letters, digits, "_")');
const askMode = z.enum(ASK_MODES, { error: 'on_ask is wait or return' });
const seconds = (max: number) => durationSchema.refine((s) => s <= max, `at most ${max}s`);

const serverSchema = z
  .strictObject({
    id: z.string().regex(SERVER_ID, 'id is lower-case letters, digits and "-", starting with a letter (at most 40)'),
    description: z.string().trim().min(1).max(500).optional(),
    command: z.string().trim().min(1).optional(),
    args: z.array(z.string()).default([]),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name'), envName).default({}),
    cwd: z.string().min(1).optional(),
    url: z.url({ protocol: /^https?$/, error: 'url is an http(s) URL' }).optional(),
    headers: z.record(z.string().regex(/^[A-Za-z0-9-]+$/, 'a header name'), envName).default({}),
    on_ask: askMode.optional(),
    call_timeout: seconds(3600).optional(),
    tools: z.record(z.string().min(1), z.strictObject({ on_ask: askMode.optional() })).default({}),
  })
  .superRefine((s, ctx) => {
    if ((s.command === undefined) === (s.url === undefined)) {
      ctx.addIssue({ code: 'custom', path: [], message: 'a server has either a command (stdio) or a url (Streamable HTTP), one of them' });
    }
    if (s.url !== undefined && (s.args.length > 0 || Object.keys(s.env).length > 0 || s.cwd !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'args, env and cwd are for a command; a url server takes headers' });
    }
    if (s.command !== undefined && Object.keys(s.headers).length > 0) {
      ctx.addIssue({ code: 'custom', path: ['headers'], message: 'headers are for a url server; a command takes env' });
    }
  });

const fileSchema = z
  .strictObject({
    version: z.literal(1).default(1),
    separator: z.string().regex(/^[A-Za-z0-9_.-]{1,4}$/, 'separator is 1 to 4 of letters, digits, "_", "." or "-"').default('__'),
    approval_wait: seconds(24 * 3600).default(600),
    call_timeout: seconds(3600).default(60),
    servers: idList(serverSchema, 'server'),
  })
  .superRefine((f, ctx) => {
    (f.servers ?? []).forEach((s, i) => {
      if (s.id.includes(f.separator)) ctx.addIssue({ code: 'custom', path: ['servers', i, 'id'], message: `the id contains the separator "${f.separator}"` });
    });
  });

export type UpstreamTransport =
  | { readonly kind: 'stdio'; readonly command: string; readonly args: readonly string[]; readonly env: Readonly<Record<string, string>>; readonly cwd?: string }
  | { readonly kind: 'http'; readonly url: string; readonly headers: Readonly<Record<string, string>> };

export interface McpServerConfig {
  readonly id: string;
  readonly description?: string;
  /** how to reach it, with the environment's values filled in (never shown) */
  readonly transport: UpstreamTransport;
  /** what /transparency shows: the command and its arguments, or the URL without its query */
  readonly shown: string;
  /** the variables it is given, by the name of ours they come from (names only) */
  readonly envFrom: Readonly<Record<string, string>>;
  readonly onAsk: AskMode;
  /** per tool (the upstream's own name): how an ASK is answered */
  readonly toolOnAsk: Readonly<Record<string, AskMode>>;
  readonly callTimeoutMs: number;
  /** where it is declared, file:line:column */
  readonly position: string;
}

export interface McpConfig {
  readonly separator: string;
  readonly approvalWaitMs: number;
  readonly servers: readonly McpServerConfig[];
}

/** A stdio server's command line as the allowlist compares it: the command and each argument, exactly. */
export function commandKey(command: string, args: readonly string[]): string {
  return JSON.stringify([command, ...args]);
}

export const NO_MCP: McpConfig = Object.freeze({ separator: '__', approvalWaitMs: 600_000, servers: Object.freeze([]) as readonly McpServerConfig[] });

/**
 * Parse config/mcp.yaml. `secrets: 'optional'` is for a process that only reads the file (a page, a one-shot command):
 * a variable it names that is not set is then left empty; a process that connects refuses the file instead, pointing at
 * the line that names the variable.
 */
export function parseMcpConfig(
  text: string,
  file = 'mcp.yaml',
  env: Readonly<Record<string, string | undefined>> = {},
  options: {
    secrets?: 'required' | 'optional';
    /**
     * the command lines (commandKey) a stdio server may have, when the text does not come from this server's disk (a
     * revision, from the database, or a proposal): every other command is refused at its line
     */
    allowedCommands?: ReadonlySet<string>;
  } = {},
): McpConfig {
  const { data, at } = parseYamlConfigLocated(text, file, fileSchema);
  const issues: ConfigIssue[] = [];
  const fromEnv = (path: (string | number)[], variable: string): string => {
    const value = env[variable];
    if (value === undefined && options.secrets !== 'optional') {
      issues.push({ ...at(path), path: path.join('.'), message: `the environment variable ${variable} is not set` });
    }
    return value ?? '';
  };
  const servers = (data.servers ?? []).map((s, i): McpServerConfig => {
    const pos = at(['servers', i]);
    const resolved = (map: Record<string, string>, key: string) =>
      Object.freeze(Object.fromEntries(Object.entries(map).map(([name, variable]) => [name, fromEnv(['servers', i, key, name], variable)])));
    if (s.command !== undefined && options.allowedCommands && !options.allowedCommands.has(commandKey(s.command, s.args))) {
      issues.push({
        ...at(['servers', i, 'command']),
        path: `servers.${i}.command`,
        message: `"${[s.command, ...s.args].join(' ')}" is not a command this server may start: a configuration from the database starts only the commands of the mcp.yaml on this server's disk or of the list SWARM_MCP_ALLOWED_COMMANDS names`,
      });
    }
    const transport: UpstreamTransport =
      s.command !== undefined
        ? Object.freeze({ kind: 'stdio' as const, command: s.command, args: Object.freeze([...s.args]), env: resolved(s.env, 'env'), ...(s.cwd !== undefined ? { cwd: s.cwd } : {}) })
        : Object.freeze({ kind: 'http' as const, url: s.url!, headers: resolved(s.headers, 'headers') });
    return Object.freeze({
      id: s.id,
      ...(s.description !== undefined ? { description: s.description } : {}),
      transport,
      shown: s.command !== undefined ? [s.command, ...s.args].join(' ') : s.url!.replace(/[?#].*$/, ''),
      envFrom: Object.freeze({ ...(s.command !== undefined ? s.env : s.headers) }),
      onAsk: s.on_ask ?? 'wait',
      toolOnAsk: Object.freeze(Object.fromEntries(Object.entries(s.tools).flatMap(([tool, t]) => (t.on_ask ? [[tool, t.on_ask]] : [])))),
      callTimeoutMs: (s.call_timeout ?? data.call_timeout) * 1000,
      position: `${file}:${pos.line}:${pos.column}`,
    });
  });
  if (issues.length > 0) throw new ConfigFileError(file, issues);
  return Object.freeze({ separator: data.separator, approvalWaitMs: data.approval_wait * 1000, servers: Object.freeze(servers) });
}

/** How an ASK of this tool of this server is answered. */
export function askModeOf(server: McpServerConfig, tool: string): AskMode {
  return server.toolOnAsk[tool] ?? server.onAsk;
}
