/**
 * How webhook and shell hooks are reached: a signed POST with a timeout, retries with backoff and a circuit breaker;
 * a program run without a shell, the event as JSON on stdin, the answer as JSON on stdout, killed at its timeout.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { argPath, pathValues, type CompiledHook } from './config';
import { DELIVERY_HEADER, EVENT_HEADER, signature, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '@/lib/notifications/service';
import { messageOf, brand, isError } from '@/lib/errors';

/** What a webhook or a shell hook may answer to a before_tool_call (an empty answer is `allow`). */
export const hookAnswerSchema = z.strictObject({
  decision: z.enum(['allow', 'block', 'rewrite']),
  reason: z.string().max(2_000).optional(),
  /** rewrite: the whole new arguments */
  arguments: z.record(z.string(), z.unknown()).optional(),
  /** rewrite: fields to set, remove or mask, by the same paths as hooks.yaml (checked the same way) */
  set: pathValues.optional(),
  remove: z.array(argPath).optional(),
  mask: z.array(argPath).optional(),
});
export type HookAnswer = z.output<typeof hookAnswerSchema>;

/** Why a hook could not answer. */
export class HookFailure extends Error {
  static readonly kind = 'HookFailure';
  constructor(
    message: string,
    /** a refusal of the receiver itself (4xx, an answer that is not valid): retrying would not help */
    readonly final = false,
  ) {
    super(message);
    brand(this, HookFailure);
  }
}

const MAX_ANSWER_BYTES = 64 * 1024;

/** Parse an answer text: empty is `allow`; anything else must be a valid answer. */
export function parseAnswer(text: string, from: string): HookAnswer {
  if (text.trim() === '') return { decision: 'allow' };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new HookFailure(`${from} answered something that is not JSON`, true);
  }
  const parsed = hookAnswerSchema.safeParse(json);
  if (!parsed.success) {
    throw new HookFailure(`${from} answered ${parsed.error.issues.map((i) => `${i.path.join('.') || 'answer'}: ${i.message}`).join('; ')}`, true);
  }
  return parsed.data;
}

/**
 * A circuit breaker per hook: after `threshold` failed calls in a row the hook is not called for `cooldownMs`, and its
 * calls fail at once (a before_tool_call then blocks, unless on_error: allow); the first call after the cooldown
 * tries again, and a success closes the circuit.
 */
export class CircuitBreaker {
  private failures = 0;
  private openUntil = 0;

  constructor(
    private readonly threshold = 5,
    private readonly cooldownMs = 30_000,
    private readonly clock: () => number = Date.now,
  ) {}

  /** the reason calls are refused now, or undefined when a call may go */
  refusal(): string | undefined {
    if (this.failures < this.threshold) return undefined;
    const now = this.clock();
    if (now >= this.openUntil) {
      // Half-open: this call tries; the others stay refused until it succeeds (or fails, and the circuit opens again).
      this.openUntil = now + this.cooldownMs;
      return undefined;
    }
    return `its circuit is open after ${this.failures} failures in a row; it is tried again in ${Math.ceil((this.openUntil - now) / 1000)}s`;
  }

  succeeded(): void {
    this.failures = 0;
    this.openUntil = 0;
  }

  failed(): void {
    this.failures++;
    if (this.failures >= this.threshold) this.openUntil = this.clock() + this.cooldownMs;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref?.());

/**
 * POST the event, signed: `X-Swarm-Signature: sha256=HMAC-SHA256(secret, "<timestamp>.<body>")` with the timestamp in
 * `X-Swarm-Timestamp`, as the notifications do. Retries a network error, a timeout or a 5xx after `backoffMs`,
 * 4 times longer each time; a 4xx is final. Returns the answer's text.
 */
export async function postHook(target: NonNullable<CompiledHook['webhook']>, event: string, payload: unknown, backoffMs: number): Promise<string> {
  if (!target.url) throw new HookFailure('its URL is not set in this process', true);
  if (!target.secret) throw new HookFailure(`its signing secret (${target.secretEnv}) is not set in this process`, true);
  const body = JSON.stringify(payload);
  const delivery = randomUUID();
  let last: HookFailure | undefined;
  for (let attempt = 0; attempt <= target.retries; attempt++) {
    if (attempt > 0) await sleep(backoffMs * 4 ** (attempt - 1));
    const timestamp = String(Math.floor(Date.now() / 1000));
    try {
      const r = await fetch(target.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [EVENT_HEADER]: event,
          [DELIVERY_HEADER]: delivery,
          [TIMESTAMP_HEADER]: timestamp,
          [SIGNATURE_HEADER]: signature(target.secret, timestamp, body),
        },
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(target.timeoutMs),
      });
      const text = await r.text();
      if (r.ok) return text.length > MAX_ANSWER_BYTES ? text.slice(0, MAX_ANSWER_BYTES) : text;
      last = new HookFailure(`its webhook answered HTTP ${r.status}`, r.status < 500 && r.status !== 429);
      if (last.final) throw last;
    } catch (error) {
      if (isError(error, HookFailure)) throw error;
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      const cause = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
      // A redirect is refused (the hook's URL is where it is asked), and would be refused again: not retried.
      if (/redirect/i.test(cause)) throw new HookFailure(`its webhook answered with a redirect, which is not followed`, true);
      last = new HookFailure(timedOut ? `its webhook did not answer within ${target.timeoutMs} ms` : `its webhook could not be reached (${cause})`);
    }
  }
  throw new HookFailure(`${last!.message}${target.retries > 0 ? ` (${target.retries + 1} attempts)` : ''}`);
}

/**
 * Run a program (no shell: the command is a list, nothing is interpolated) with the event as JSON on stdin, in `cwd`,
 * with only PATH and the hook's id and event in its environment. A non-zero exit, a timeout (the process is killed)
 * or more than 64 KiB of output is a failure. Returns stdout.
 */
export function runShellHook(command: readonly string[], cwd: string, payload: unknown, env: { id: string; event: string }, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawn(command[0]!, command.slice(1), {
        cwd,
        shell: false,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SWARM_HOOK_ID: env.id, SWARM_HOOK_EVENT: env.event } as unknown as NodeJS.ProcessEnv,
      });
    } catch (error) {
      reject(new HookFailure(`its command could not start (${messageOf(error)})`));
      return;
    }
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let settled = false;
    const finish = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      f();
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(() => reject(new HookFailure(`its command did not answer within ${timeoutMs} ms and was stopped`)));
    }, timeoutMs);
    child.stdout.on('data', (c: Buffer) => {
      outBytes += c.length;
      if (outBytes > MAX_ANSWER_BYTES) {
        child.kill('SIGKILL');
        finish(() => reject(new HookFailure('its command wrote more than 64 KiB', true)));
        return;
      }
      out.push(c);
    });
    child.stderr.on('data', (c: Buffer) => {
      if (err.length < 2_000) err += c.toString('utf8');
    });
    child.on('error', (error) => finish(() => reject(new HookFailure(`its command could not start (${error.message})`))));
    child.on('close', (code, signal) => {
      if (code === 0) finish(() => resolve(Buffer.concat(out).toString('utf8')));
      else {
        const why = err.trim().split('\n').pop()?.slice(0, 300);
        finish(() => reject(new HookFailure(`its command exited with ${code === null ? `signal ${signal}` : `code ${code}`}${why ? `: ${why}` : ''}`)));
      }
    });
    child.stdin.on('error', () => undefined); // a program that does not read its input is not an error by itself
    child.stdin.end(JSON.stringify(payload));
  });
}
