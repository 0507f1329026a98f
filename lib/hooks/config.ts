/**
 * config/hooks.yaml: lifecycle hooks that block, rewrite, rate-limit or report tool calls. Pure: text and the
 * environment in, compiled hooks out (or ConfigFileError with file:line:column for every problem).
 *
 *   hooks:
 *     - id: no-rival-mail
 *       event: before_tool_call
 *       match: { tool: send_email }
 *       when: "args.to.endsWith('@rival.com')"
 *       block: Mail to competitors is not sent by agents.
 *
 * A hook has an id, an event, an optional `match` (agent, tool, role, arguments, MCP annotations, as in the policy) and
 * `when` (CEL, as in the policy), and exactly one action: block, rewrite, rate_limit (before_tool_call only), webhook or shell. A
 * webhook's signing secret comes from the environment (`secret_env`), never from the file.
 */
import { z } from 'zod';
import { HOOK_EVENTS, type HookAction, type HookEventName } from '@/lib/permissions/call-hooks';
import { conditionSchema } from '@/lib/permissions/condition';
import { durationSchema } from '@/lib/permissions/gates';
import { compilePolicy, policyRuleSchema, type CompiledRule } from '@/lib/permissions/policy';
import { ConfigFileError, idList, parseYamlConfigLocated, type ConfigIssue } from '@/lib/permissions/yaml-config';
import { pathProblem, type Rewrite } from './rewrite';

export type { Rewrite } from './rewrite';

/** Shell hooks run only while this flag is on; TypeScript hooks (registerHook) only while TS_HOOKS_FLAG is. */
export const SHELL_HOOKS_FLAG = 'plugin_shell_hooks_enabled';
export const TS_HOOKS_FLAG = 'hooks_enabled';

const envName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'the name of an environment variable (upper case, digits, "_")');
/** a dotted path into the arguments: `bcc`, `payment.card`, `recipients.0` (never __proto__, constructor, prototype) */
export const argPath = z.string().superRefine((path, ctx) => {
  const problem = pathProblem(path);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** Paths to values (`set`): every key an argument path. A literal `__proto__` key has become the object's prototype. */
export const pathValues = z.record(z.string(), z.unknown()).superRefine((paths, ctx) => {
  const proto = Object.getPrototypeOf(paths) as unknown;
  if (proto !== Object.prototype && proto !== null) ctx.addIssue({ code: 'custom', message: '"__proto__" is named, which no path may name' });
  for (const key of Object.keys(paths)) {
    const problem = pathProblem(key);
    if (problem) ctx.addIssue({ code: 'custom', path: [key], message: problem });
  }
});
const seconds = (max: number) => durationSchema.refine((s) => s <= max, `at most ${max}s`);

const rewriteSchema = z
  .strictObject({
    /** set these paths to these values (created when missing) */
    set: pathValues.optional(),
    /** remove these paths */
    remove: z.array(argPath).min(1).optional(),
    /** replace the values at these paths (when present) with `[MASKED]` */
    mask: z.array(argPath).min(1).optional(),
  })
  .refine((r) => r.set !== undefined || r.remove !== undefined || r.mask !== undefined, 'a rewrite sets, removes or masks something');

const hookSchema = z
  .strictObject({
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'id must be letters, digits, "_", "." or "-"'),
    event: z.enum(HOOK_EVENTS, { error: `event is one of ${HOOK_EVENTS.join(', ')}` }),
    description: z.string().trim().min(1).max(500).optional(),
    match: policyRuleSchema.shape.match.optional(),
    when: conditionSchema.optional(),
    block: z.string().trim().min(1, 'block needs the reason the agent and the auditor will read').optional(),
    rewrite: rewriteSchema.optional(),
    rate_limit: z.strictObject({ calls: z.number().int().min(1), per: seconds(86_400) }).optional(),
    webhook: z
      .strictObject({
        url: z.url({ protocol: /^https?$/, error: 'url is an http(s) URL' }).optional(),
        url_env: envName.optional(),
        secret_env: envName,
        timeout: seconds(30).default(5),
        retries: z.number().int().min(0).max(5).default(2),
      })
      .optional(),
    shell: z.strictObject({ command: z.array(z.string().min(1)).min(1, 'command is the program and its arguments, as a list'), timeout: seconds(30).default(5) }).optional(),
    /** what a webhook or shell hook that fails or times out does to a before_tool_call: block it (default) or let it be */
    on_error: z.enum(['block', 'allow']).optional(),
  })
  .superRefine((h, ctx) => {
    const actions = ACTIONS.filter((a) => h[a] !== undefined);
    if (actions.length !== 1) {
      ctx.addIssue({ code: 'custom', message: `a hook has exactly one action (${ACTIONS.join(', ')})${actions.length > 1 ? `, not ${actions.join(' and ')}` : ''}` });
      return;
    }
    const action = actions[0]!;
    if ((action === 'block' || action === 'rewrite' || action === 'rate_limit') && h.event !== 'before_tool_call') {
      ctx.addIssue({ code: 'custom', path: [action], message: `${action} acts on a call before it runs: its event is before_tool_call, not ${h.event}` });
    }
    if (h.on_error !== undefined && action !== 'webhook' && action !== 'shell') {
      ctx.addIssue({ code: 'custom', path: ['on_error'], message: 'on_error is for webhook and shell hooks (the others cannot fail)' });
    } else if (h.on_error !== undefined && h.event !== 'before_tool_call') {
      ctx.addIssue({ code: 'custom', path: ['on_error'], message: `on_error decides what a failure does to a call before it runs; a ${h.event} hook is told after the fact, so it has none` });
    }
    if (h.match && (h.match.method !== undefined || h.match.path !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['match'], message: 'hooks act on tool calls: match by agent, tool, role or arguments' });
    }
    if (h.webhook && (h.webhook.url === undefined) === (h.webhook.url_env === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['webhook'], message: 'a webhook has url or url_env (one of them)' });
    }
  });

const ACTIONS = ['block', 'rewrite', 'rate_limit', 'webhook', 'shell'] as const;

const hooksFileSchema = z.strictObject({
  version: z.literal(1).default(1),
  hooks: idList(hookSchema, 'hook'),
});

type HookInput = z.output<typeof hookSchema>;

export interface CompiledHook {
  readonly id: string;
  readonly event: HookEventName;
  readonly action: Exclude<HookAction, 'typescript'>;
  readonly description?: string;
  /** the match and the condition, compiled as a policy rule is (agent, tool, role, arguments, when) */
  readonly rule: CompiledRule;
  readonly block?: string;
  readonly rewrite?: Rewrite;
  readonly rateLimit?: { calls: number; perSeconds: number };
  /** `secret` is undefined when this process does not hold it (a one-shot command): the hook then fails */
  readonly webhook?: { url: string | undefined; urlShown: string; secret: string | undefined; secretEnv: string; timeoutMs: number; retries: number };
  readonly shell?: { command: readonly string[]; timeoutMs: number };
  readonly onError: 'block' | 'allow';
  /** where it is written, file:line:column */
  readonly position: string;
  /** as written, for /transparency */
  readonly source: HookInput;
}

export interface HooksConfig {
  readonly hooks: readonly CompiledHook[];
  readonly byEvent: ReadonlyMap<HookEventName, readonly CompiledHook[]>;
  /** a before_tool_call hook of this file may have to be waited for (webhook, shell) */
  readonly beforeMayWait: boolean;
  /**
   * The tools a before_tool_call hook names exactly, or `any` when one matches by glob or every tool: a call of any
   * other tool skips the hooks with one set lookup (this runs on every decision).
   */
  readonly beforeTools: ReadonlySet<string> | 'any';
}

export function compileHooks(hooks: readonly CompiledHook[]): HooksConfig {
  const byEvent = new Map<HookEventName, CompiledHook[]>();
  for (const h of hooks) {
    const list = byEvent.get(h.event);
    if (list) list.push(h);
    else byEvent.set(h.event, [h]);
  }
  const before = byEvent.get('before_tool_call') ?? [];
  let beforeTools: Set<string> | 'any' = new Set<string>();
  for (const h of before) {
    const tool = h.rule.tool;
    if (!tool || tool.any || tool.globs.length > 0) {
      beforeTools = 'any';
      break;
    }
    for (const t of tool.exact) beforeTools.add(t);
  }
  return { hooks, byEvent, beforeMayWait: before.some((h) => h.action === 'webhook' || h.action === 'shell'), beforeTools };
}

export const NO_HOOKS: HooksConfig = compileHooks([]);

/**
 * Parse config/hooks.yaml. `secrets: 'optional'` is for one-shot processes (the CLI): a webhook whose secret is not set
 * in that process is kept and fails when it runs (a before_tool_call webhook then blocks, unless `on_error: allow`);
 * a server refuses the file instead, pointing at the line that names the variable.
 */
export function parseHooks(
  text: string,
  file = 'hooks.yaml',
  env: Readonly<Record<string, string | undefined>> = {},
  options: { secrets?: 'required' | 'optional' } = {},
): HooksConfig {
  const { data, at } = parseYamlConfigLocated(text, file, hooksFileSchema);
  const issues: ConfigIssue[] = [];
  const problem = (path: (string | number)[], message: string) => issues.push({ ...at(path), path: path.join('.'), message });
  const compiled = (data.hooks ?? []).map((h, i): CompiledHook => {
    const pos = at(['hooks', i]);
    const rule = compilePolicy([{ id: h.id, decision: 'ALLOW', priority: 0, match: h.match ?? {}, when: h.when }]).rules[0]!;
    const action = ACTIONS.find((a) => h[a] !== undefined)!;
    let webhook: CompiledHook['webhook'];
    if (h.webhook) {
      const w = h.webhook;
      const url = w.url ?? env[w.url_env!]?.trim();
      const secret = env[w.secret_env] || undefined;
      if (options.secrets !== 'optional') {
        if (!url) problem(['hooks', i, 'webhook', 'url_env'], `the environment variable ${w.url_env} is not set: hook "${h.id}" has no URL`);
        if (!secret) problem(['hooks', i, 'webhook', 'secret_env'], `the environment variable ${w.secret_env} is not set: hook "${h.id}" cannot sign its requests`);
      }
      if (url && !/^https?:\/\//.test(url)) problem(['hooks', i, 'webhook', 'url_env'], `the environment variable ${w.url_env} does not hold an http(s) URL`);
      // Shown on /transparency to every viewer: the address without its query (a token in a URL belongs in url_env).
      webhook = { url: url || undefined, urlShown: w.url ? w.url.replace(/[?#].*$/, '') : `$${w.url_env}`, secret, secretEnv: w.secret_env, timeoutMs: w.timeout * 1000, retries: w.retries };
    }
    return {
      id: h.id,
      event: h.event,
      action,
      description: h.description,
      rule,
      block: h.block,
      rewrite: h.rewrite && { set: Object.entries(h.rewrite.set ?? {}), remove: h.rewrite.remove ?? [], mask: h.rewrite.mask ?? [] },
      rateLimit: h.rate_limit && { calls: h.rate_limit.calls, perSeconds: h.rate_limit.per },
      webhook,
      shell: h.shell && { command: h.shell.command, timeoutMs: h.shell.timeout * 1000 },
      onError: h.on_error ?? 'block',
      position: `${file}:${pos.line}:${pos.column}`,
      source: h,
    };
  });
  if (issues.length > 0) throw new ConfigFileError(file, issues);
  return compileHooks(compiled);
}
