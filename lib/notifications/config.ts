/**
 * config/notifications.yaml: where people are told that they are needed. Pure: text and the environment in, the
 * resolved channels out (or ConfigFileError with file:line:column).
 *
 * Secrets never live in the file: a channel names the environment variable that holds its secret (`secret_env`) or its
 * URL (`url_env`, a Slack incoming-webhook URL is itself a secret). A channel whose variable is missing or empty is
 * refused at load, pointing at the line that names it, so a server never starts with a channel that cannot send.
 */
import { z } from 'zod';
import { durationSchema } from '@/lib/permissions/gates';
import { ConfigFileError, parseYamlConfigLocated, type ConfigIssue } from '@/lib/permissions/yaml-config';

export const NOTIFICATION_EVENTS = ['approval_requested', 'approval_expiring', 'denial_burst'] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];
export type ChannelKind = 'webhook' | 'slack';

const ID = /^[a-z][a-z0-9_-]*$/;
const idSchema = z.string().regex(ID, 'an id is lower-case letters, digits, "_" or "-"');
const envName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'the name of an environment variable (upper case, digits, "_")');
const eventsSchema = z
  .array(z.enum(NOTIFICATION_EVENTS, { error: `an event is one of ${NOTIFICATION_EVENTS.join(', ')}` }))
  .min(1)
  .default([...NOTIFICATION_EVENTS]);
const attemptsSchema = z.number().int().min(1, 'max_attempts is at least 1').max(10, 'max_attempts is at most 10').default(5);
const timeoutSchema = durationSchema.default(5).refine((s) => s <= 60, 'timeout is at most 60s');

/** What every kind of channel takes. */
const channelFields = {
  events: eventsSchema,
  timeout: timeoutSchema,
  max_attempts: attemptsSchema,
  /** a channel whose variables are not set is off (listed as off, nothing queued for it) instead of refused */
  optional: z.boolean().default(false),
};

const webhookSchema = z.strictObject({
  id: idSchema,
  kind: z.literal('webhook'),
  /** the receiver's URL, written here (not a secret) or named by url_env */
  url: z.url({ protocol: /^https?$/, error: 'url is an http(s) URL' }).optional(),
  url_env: envName.optional(),
  /** the variable holding the HMAC-SHA256 key */
  secret_env: envName,
  ...channelFields,
});

const slackSchema = z.strictObject({
  id: idSchema,
  kind: z.literal('slack'),
  /** the variable holding the incoming-webhook URL (the URL is the secret) */
  url_env: envName,
  ...channelFields,
});

const burstSchema = z.strictObject({
  id: idSchema,
  /** this many denials ... */
  denials: z.number().int().min(1, 'denials is at least 1'),
  /** ... within this window (`60s`, `5m`) */
  within: durationSchema.refine((s) => s <= 86_400, 'within is at most 1d'),
  /** only this agent's denials (default: every agent's) */
  agent: z.string().min(1).optional(),
  /** only these channels (default: every channel that takes denial_burst) */
  channels: z.array(idSchema).min(1).optional(),
});

export const notificationsFileSchema = z.strictObject({
  version: z.literal(1).default(1),
  channels: z.array(z.discriminatedUnion('kind', [webhookSchema, slackSchema], { error: 'kind is webhook or slack' })).nullable().default([]),
  /** approval_expiring: how long before a pending request expires its channels are told (once per request) */
  expiring: z.strictObject({ before: durationSchema.default(15 * 60) }).default({ before: 15 * 60 }),
  bursts: z.array(burstSchema).nullable().default([]),
});

export interface Channel {
  id: string;
  kind: ChannelKind;
  /** resolved from the file or the environment; a Slack URL is a secret and is never shown */
  url: string;
  /** the HMAC key of a webhook, from the environment */
  secret?: string;
  /** where the URL came from, for display: the URL of a webhook written in the file, else `$VARIABLE` */
  urlShown: string;
  secretEnv?: string;
  events: readonly NotificationEvent[];
  timeoutSeconds: number;
  maxAttempts: number;
}

export interface BurstRule {
  id: string;
  denials: number;
  withinSeconds: number;
  agent?: string;
  channels?: readonly string[];
}

/** A channel marked `optional: true` whose variables are not set in this process: shown as off, never sent to. */
export interface ChannelOff {
  id: string;
  kind: ChannelKind;
  /** which variables are missing, in words */
  reason: string;
}

export interface NotificationConfig {
  channels: readonly Channel[];
  off: readonly ChannelOff[];
  expiringBeforeSeconds: number;
  bursts: readonly BurstRule[];
}

export const NO_NOTIFICATIONS: NotificationConfig = Object.freeze({ channels: [], off: [], expiringBeforeSeconds: 15 * 60, bursts: [] });

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Parse config/notifications.yaml and resolve every channel's URL and secret from `env`. Throws ConfigFileError for a
 * malformed file, a missing or empty variable, a duplicate id, or a burst naming an unknown channel.
 *
 * `secrets: 'optional'` is for processes that only queue deliveries and never send them (the CLI, the decision
 * listener): a channel whose variables are not set in that process is kept, without URL or secret, so that its
 * deliveries are queued for the process that sends (a developer's shell need not hold the Slack URL to run a command).
 */
export function parseNotifications(
  text: string,
  file = 'notifications.yaml',
  env: Readonly<Record<string, string | undefined>> = {},
  options: { secrets?: 'required' | 'optional' } = {},
): NotificationConfig {
  const lenient = options.secrets === 'optional';
  const { data, at } = parseYamlConfigLocated(text, file, notificationsFileSchema);
  const issues: ConfigIssue[] = [];
  const problem = (path: (string | number)[], message: string) => issues.push({ ...at(path), path: path.join('.'), message });
  const channels: Channel[] = [];
  const off: ChannelOff[] = [];
  const seen = new Set<string>();
  (data.channels ?? []).forEach((c, i) => {
    if (seen.has(c.id)) problem(['channels', i, 'id'], `channel "${c.id}" is declared twice`);
    seen.add(c.id);
    let url: string | undefined;
    let urlShown = '';
    // An optional channel is off while its variables are missing (the demo's local receiver is one): said, not refused.
    // Set but malformed variables are refused as for any channel.
    if (c.optional) {
      const missing = [c.url_env, c.kind === 'webhook' ? c.secret_env : undefined].filter((v): v is string => v !== undefined && !env[v]?.trim());
      if (missing.length > 0) {
        off.push({ id: c.id, kind: c.kind, reason: `${missing.map((v) => `$${v}`).join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set` });
        return;
      }
    }
    if (c.kind === 'webhook' && c.url !== undefined && c.url_env !== undefined) {
      problem(['channels', i, 'url_env'], 'write url or url_env, not both');
      return;
    }
    if (c.kind === 'webhook' && c.url !== undefined) {
      url = c.url;
      urlShown = c.url;
    } else if (c.url_env === undefined) {
      problem(['channels', i], `channel "${c.id}" needs url or url_env`);
      return;
    } else {
      const value = env[c.url_env]?.trim();
      urlShown = `$${c.url_env}`;
      if (!value) {
        if (lenient) url = '';
        else problem(['channels', i, 'url_env'], `the environment variable ${c.url_env} is not set: channel "${c.id}" has no URL`);
      }
      else if (!isHttpUrl(value)) problem(['channels', i, 'url_env'], `the environment variable ${c.url_env} does not hold an http(s) URL`);
      else url = value;
    }
    let secret: string | undefined;
    if (c.kind === 'webhook') {
      secret = env[c.secret_env];
      if (!secret && !lenient) problem(['channels', i, 'secret_env'], `the environment variable ${c.secret_env} is not set: channel "${c.id}" cannot sign its messages`);
    }
    if (url === undefined || (c.kind === 'webhook' && !secret && !lenient)) return;
    channels.push({
      id: c.id,
      kind: c.kind,
      url,
      secret,
      urlShown,
      secretEnv: c.kind === 'webhook' ? c.secret_env : undefined,
      events: [...new Set(c.events)],
      timeoutSeconds: c.timeout,
      maxAttempts: c.max_attempts,
    });
  });
  const burstIds = new Set<string>();
  const bursts: BurstRule[] = (data.bursts ?? []).map((b, i) => {
    if (burstIds.has(b.id)) problem(['bursts', i, 'id'], `burst "${b.id}" is declared twice`);
    burstIds.add(b.id);
    b.channels?.forEach((name, j) => {
      if (!seen.has(name)) problem(['bursts', i, 'channels', j], `no channel "${name}" is declared`);
    });
    return { id: b.id, denials: b.denials, withinSeconds: b.within, agent: b.agent, channels: b.channels };
  });
  if (issues.length > 0) throw new ConfigFileError(file, issues);
  return { channels, off, expiringBeforeSeconds: data.expiring.before, bursts };
}
