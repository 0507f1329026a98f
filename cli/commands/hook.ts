/**
 * `swarm hook claude-code` and `swarm hook codex`: agents people already run, decided by the engine without code.
 *
 * Claude Code (and the Codex CLI, which adopted the same contract) runs a command hook before every tool call with a
 * `PreToolUse` event on stdin: { hook_event_name, tool_name, tool_input, tool_use_id, session_id, cwd, ... }. This
 * command decides it as a tool call of one agent (`--agent`, else SWARM_AGENT, else `claude_code`) and prints
 *   { "hookSpecificOutput": { "hookEventName": "PreToolUse", "permissionDecision": "allow" | "deny",
 *                             "permissionDecisionReason": "...", "updatedInput": { ... } } }
 * with `updatedInput` (the whole new input) when a before_tool_call hook (config/hooks.yaml) rewrote the arguments.
 * The decision is made in process on the database (SWARM_DB), or over REST when SWARM_URL is set (with SWARM_TOKEN,
 * the agent's token). Tool names are matched in lower case (`Bash` is `bash`, `mcp__github__create_issue` stays).
 *
 * An ASK of the engine (a gate, a policy ASK rule) is answered `deny`, with the approval request to decide: Claude
 * Code's own `ask` would let the person at the terminal approve the call locally, around the gate. Anything that goes
 * wrong (unreadable event, engine unreachable, a decision that cannot be recorded) is a `deny` that says why: fail
 * closed. A `PostToolUse` event is reported to the after_tool_call hooks (no output); other events are left alone.
 */
import { z } from 'zod';
import { openApp, type App } from '@/lib/app';
import { locationTarget } from '@/db/location';
import { checkAnswer } from '@/lib/decisions/check';
import { expectPositionals, parseCommand } from '@/cli/args';
import { dbLocation, type Env, type Io } from '@/cli/context';
import { UsageError } from '@/cli/errors';
import { argumentsSchema } from '@/lib/http/schemas';
import { messageOf } from '@/lib/errors';

export const HOOK_CLIENTS = ['claude-code', 'codex'] as const;
export const DEFAULT_HOOK_AGENT = 'claude_code';

const toolEvent = z.object({
  hook_event_name: z.string(),
  tool_name: z.string().min(1),
  // kept exactly as sent, or refused (and so denied): a copy would drop a "__proto__" key from what is decided
  tool_input: argumentsSchema.default({}),
  tool_use_id: z.string().optional(),
  /** PostToolUse: what the tool answered */
  tool_response: z.unknown().optional(),
});

/** The engine's answer, whichever way it was reached: the check endpoint's. */
type Answer = ReturnType<typeof checkAnswer>;

export interface HookOutput {
  hookSpecificOutput: {
    hookEventName: 'PreToolUse';
    permissionDecision: 'allow' | 'deny';
    permissionDecisionReason: string;
    /** the whole tool input to run with instead of the agent's, when a hook rewrote it */
    updatedInput?: Readonly<Record<string, unknown>>;
  };
}

/** Claude Code's tool names as the policy sees them: lower case, anything but letters, digits, `_` and `-` as `_`. */
export function toolNameOf(claudeTool: string): string {
  return claudeTool.toLowerCase().replace(/[^a-z0-9_-]/g, '_');
}

function output(decision: 'allow' | 'deny', reason: string): HookOutput {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: reason } };
}

/** The hook's answer to the engine's. */
export function answerToHook(a: Answer, consoleUrl: string | undefined): HookOutput {
  const ref = `${a.rule_source}${a.decision_id ? `, decision ${a.decision_id}` : ''}`;
  if (a.decision === 'ALLOW') {
    const changedBy = a.arguments_changed_by ?? [];
    if (changedBy.length === 0 || !a.arguments) return output('allow', `Allowed by Swarm Permissions (${ref}).`);
    const o = output('allow', `Allowed by Swarm Permissions (${ref}), with the input rewritten by ${changedBy.map((h) => `hook:${h}`).join(', ')}.`);
    o.hookSpecificOutput.updatedInput = a.arguments;
    return o;
  }
  if (a.decision === 'ASK') {
    const where = consoleUrl ? `${consoleUrl.replace(/\/+$/, '')}/approvals` : 'the console\'s /approvals page';
    return output(
      'deny',
      `This call waits for a person's approval (${a.approval_id ?? 'request'}, ${a.rule_source}): ${a.reason} Once it is approved at ${where}, make the same call again.`,
    );
  }
  return output('deny', `${a.reason} (${ref})`);
}

/** POST a JSON body to the permission service at SWARM_URL, as the agent's token. */
function postToService(env: Env, path: string, token: string, body: unknown): Promise<Response> {
  return fetch(`${env.SWARM_URL!.replace(/\/+$/, '')}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(Number(env.SWARM_HOOK_TIMEOUT_MS ?? 10_000)),
  });
}

async function decideOverRest(env: Env, agent: string, tool: string, args: Record<string, unknown>, toolCallId: string | undefined): Promise<Answer> {
  if (!env.SWARM_TOKEN) throw new Error('SWARM_URL is set but SWARM_TOKEN is not: give the agent\'s token (npx swarm tokens add --agent NAME).');
  const r = await postToService(env, '/api/v1/permissions/check', env.SWARM_TOKEN, { agent, tool, arguments: args, ...(toolCallId ? { tool_call_id: toolCallId } : {}) });
  const body = (await r.json().catch(() => ({}))) as Partial<Answer> & { error?: { message?: string; rule_source?: string; decision_id?: string } };
  if (r.ok && body.decision) return body as Answer;
  // A refusal of the request itself (a bad token, a role) is a denial too, with the server's reason.
  throw new Error(`the permission service answered ${r.status}: ${body.error?.message ?? 'no reason given'}`);
}

const agentPrincipal = (agent: string) => ({ kind: 'agent' as const, id: agent, role: 'viewer' as const, agent });

/**
 * The application SWARM_DB names, SQLite or PostgreSQL, opened for one hook call: `fn`, then the hooks it set off
 * are heard (a denial's, a finished call's) before this process ends.
 */
async function withHookApp<T>(env: Env, fn: (app: App) => T): Promise<Awaited<T>> {
  const app = await openApp({ dbPath: locationTarget(dbLocation(env)), env, watchConfig: false });
  try {
    const result = await fn(app);
    await app.hooks.drain();
    return result;
  } finally {
    await app.close();
  }
}

function decideInProcess(env: Env, agent: string, tool: string, args: Record<string, unknown>, toolCallId: string | undefined): Promise<Answer> {
  return withHookApp(env, async (app) => checkAnswer(await app.decisions.decide({ kind: 'tool', principal: agentPrincipal(agent), agent, tool, arguments: args, toolCallId }), false));
}

/** PostToolUse: the after_tool_call hooks hear how the call went (in process, or over REST). */
async function reportFinished(env: Env, agent: string, tool: string, event: z.output<typeof toolEvent>): Promise<void> {
  const failed = isFailure(event.tool_response);
  if (env.SWARM_URL) {
    const r = await postToService(env, '/api/v1/permissions/finished', env.SWARM_TOKEN ?? '', {
      agent,
      tool,
      arguments: event.tool_input,
      ...(event.tool_use_id ? { tool_call_id: event.tool_use_id } : {}),
      outcome: failed ? 'failed' : 'succeeded',
      ...(failed ? { error: String((event.tool_response as { error?: unknown }).error) } : { result: event.tool_response ?? null }),
    });
    if (!r.ok) throw new Error(`the permission service answered ${r.status}`);
    return;
  }
  await withHookApp(env, (app) => {
    const context = { kind: 'tool' as const, principal: agentPrincipal(agent), agent, tool, arguments: event.tool_input, toolCallId: event.tool_use_id };
    app.decisions.finished(failed ? { context, outcome: 'failed', error: String((event.tool_response as { error?: unknown }).error) } : { context, outcome: 'succeeded', result: event.tool_response ?? null });
  });
}

/** Claude Code reports a failed tool with an `error` in its response. */
function isFailure(response: unknown): boolean {
  return response !== null && typeof response === 'object' && 'error' in response && Boolean((response as { error?: unknown }).error);
}

/** `swarm hook CLIENT [--agent NAME]`: read one event from stdin, print the answer. Exit 0 whenever an answer is printed. */
export async function hookCommand(io: Io, env: Env, argv: string[], readStdin: () => Promise<string>): Promise<number> {
  const { values, positionals } = parseCommand(argv, { agent: { type: 'string' } });
  const [client] = expectPositionals(positionals, ['CLIENT']);
  if (!(HOOK_CLIENTS as readonly string[]).includes(client!)) throw new UsageError(`unknown hook client "${client}": use ${HOOK_CLIENTS.join(' or ')}.`);
  const agent = values.agent ?? (env.SWARM_AGENT || DEFAULT_HOOK_AGENT);
  const print = (o: HookOutput) => io.out(`${JSON.stringify(o)}\n`);

  let event: z.output<typeof toolEvent>;
  try {
    const parsed = toolEvent.safeParse(JSON.parse(await readStdin()));
    if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `${i.path.join('.') || 'event'}: ${i.message}`).join('; '));
    event = parsed.data;
  } catch (error) {
    print(output('deny', `Swarm Permissions could not read the hook event (${messageOf(error)}); denied.`));
    return 0;
  }
  const tool = toolNameOf(event.tool_name);
  if (event.hook_event_name === 'PostToolUse') {
    try {
      await reportFinished(env, agent, tool, event);
    } catch (error) {
      // The call has run already: nothing to refuse. Say so on stderr (Claude Code shows it in verbose mode).
      io.err(`Swarm Permissions could not report the finished call to its hooks: ${messageOf(error)}\n`);
    }
    return 0;
  }
  if (event.hook_event_name !== 'PreToolUse') return 0;

  try {
    const answer = env.SWARM_URL
      ? await decideOverRest(env, agent, tool, event.tool_input, event.tool_use_id)
      : await decideInProcess(env, agent, tool, event.tool_input, event.tool_use_id);
    print(answerToHook(answer, env.SWARM_URL));
  } catch (error) {
    print(output('deny', `Swarm Permissions could not decide this call (${messageOf(error)}); denied, as every call is when the decision cannot be made.`));
  }
  return 0;
}
