/**
 * What a notification says: the generic webhook's JSON and the Slack Block Kit message, built from one notice. Pure.
 * Arguments arrive already masked (lib/audit/redact.ts maskArguments, as the audit trail stores them).
 */
import { durationWords } from '@/lib/config/duration-words';
import type { ChannelKind, NotificationEvent } from './config';

export interface ApprovalNotice {
  kind: 'approval';
  event: 'approval_requested' | 'approval_expiring';
  id: string;
  gate: string;
  agent: string;
  tool: string;
  /** masked as the audit trail masks them */
  arguments: unknown;
  maskedPaths: readonly string[];
  risk: string;
  gateDescription: string | null;
  requestedBy: string;
  requestedAt: number;
  expiresAt: number;
  approvalsRequired: number;
  /** the console's approvals page for this request */
  link: string;
}

export interface BurstNotice {
  kind: 'burst';
  event: 'denial_burst';
  id: string;
  /** denials counted in the window (at least the threshold) */
  denials: number;
  threshold: number;
  withinSeconds: number;
  agent: string | null;
  from: number;
  to: number;
  /** the denial explorer narrowed to the window (and the agent) */
  link: string;
}

export type Notice = ApprovalNotice | BurstNotice;

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** `59 min`, `2 h 5 min`, `40 s`: a time left, in words. */
export function timeLeft(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  const rest = m % 60;
  if (h < 48) return rest === 0 ? `${h} h` : `${h} h ${rest} min`;
  return `${Math.round(h / 24)} days`;
}

/** The base URL of the console in links: SWARM_PUBLIC_URL without a trailing slash (a relative link when unset). */
export function publicBase(env: Readonly<Record<string, string | undefined>>): string {
  return (env.SWARM_PUBLIC_URL?.trim() ?? '').replace(/\/+$/, '');
}

export function approvalLink(base: string, id: string): string {
  return `${base}/approvals?request=${encodeURIComponent(id)}`;
}

export function burstLink(base: string, from: number, to: number, agent: string | null): string {
  const q = new URLSearchParams({ from: String(Math.floor(from)), to: String(Math.ceil(to)) });
  if (agent) q.set('agent', agent);
  return `${base}/denials?${q.toString()}`;
}

/** The body of a generic webhook: the event and everything about it, as JSON. */
export function webhookBody(notice: Notice, notificationId: string, now: number): Record<string, unknown> {
  const common = { id: notificationId, event: notice.event as NotificationEvent, occurred_at: iso(now), source: 'swarm-permissions' };
  if (notice.kind === 'burst') {
    return {
      ...common,
      burst: {
        id: notice.id,
        denials: notice.denials,
        threshold: notice.threshold,
        within_seconds: notice.withinSeconds,
        agent: notice.agent,
        from: iso(notice.from),
        to: iso(notice.to),
      },
      link: notice.link,
    };
  }
  return {
    ...common,
    approval: {
      id: notice.id,
      gate: notice.gate,
      agent: notice.agent,
      tool: notice.tool,
      arguments: notice.arguments,
      masked_paths: notice.maskedPaths,
      risk: notice.risk,
      gate_description: notice.gateDescription,
      requested_by: notice.requestedBy,
      requested_at: iso(notice.requestedAt),
      expires_at: iso(notice.expiresAt),
      seconds_left: Math.max(0, Math.round(notice.expiresAt - now)),
      approvals_required: notice.approvalsRequired,
    },
    link: notice.link,
  };
}

const RISK_WORD: Record<string, string> = { low: 'Low', medium: 'Medium', high: 'High' };
const MAX_ARGS_CHARS = 2_500;

/** Slack mrkdwn: &, < and > are the characters Slack asks to escape. */
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function argumentsText(args: unknown): string {
  let text = JSON.stringify(args ?? {}, null, 2);
  if (text.length > MAX_ARGS_CHARS) text = `${text.slice(0, MAX_ARGS_CHARS)}\n… (cut; the console shows all of it)`;
  return '```' + esc(text.replace(/```/g, '`\u200b``')) + '```';
}

/** A Slack-compatible incoming-webhook message (Block Kit), with a plain `text` for notifications and old clients. */
export function slackBody(notice: Notice, now: number): Record<string, unknown> {
  if (notice.kind === 'burst') {
    const who = notice.agent ? `agent ${notice.agent}` : 'all agents';
    const text = `Denial burst: ${notice.denials} denials for ${who} within ${durationWords(notice.withinSeconds, 'h')} (threshold ${notice.threshold}).`;
    return {
      text,
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'Denial burst', emoji: false } },
        {
          type: 'section',
          fields: [
            { type: 'mrkdwn', text: `*Denials*\n${notice.denials} (threshold ${notice.threshold})` },
            { type: 'mrkdwn', text: `*Window*\n${durationWords(notice.withinSeconds, 'h')}` },
            { type: 'mrkdwn', text: `*Agent*\n${esc(notice.agent ?? 'all agents')}` },
            { type: 'mrkdwn', text: `*Since*\n${iso(notice.from)}` },
          ],
        },
        { type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open the denials' }, url: notice.link, action_id: 'open_denials' }] },
        { type: 'context', elements: [{ type: 'mrkdwn', text: `Swarm Permissions · burst rule \`${esc(notice.id)}\`` }] },
      ],
    };
  }
  const left = timeLeft(notice.expiresAt - now);
  const lead = notice.event === 'approval_expiring' ? `Expiring in ${left}` : 'Approval needed';
  const text = `${lead}: ${notice.agent} wants to run ${notice.tool} (risk ${notice.risk}). Expires in ${left}.`;
  const blocks: Record<string, unknown>[] = [
    { type: 'header', text: { type: 'plain_text', text: `${lead}: ${notice.tool}`.slice(0, 150), emoji: false } },
  ];
  if (notice.gateDescription) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: esc(notice.gateDescription) } });
  blocks.push(
    {
      type: 'section',
      fields: [
        { type: 'mrkdwn', text: `*Agent*\n${esc(notice.agent)}` },
        { type: 'mrkdwn', text: `*Tool*\n\`${esc(notice.tool)}\`` },
        { type: 'mrkdwn', text: `*Risk*\n${RISK_WORD[notice.risk] ?? esc(notice.risk)}` },
        { type: 'mrkdwn', text: `*Time left*\n${left} (expires ${iso(notice.expiresAt)})` },
        { type: 'mrkdwn', text: `*Gate*\n\`${esc(notice.gate)}\`${notice.approvalsRequired > 1 ? ` · ${notice.approvalsRequired} approvals needed` : ''}` },
        { type: 'mrkdwn', text: `*Requested by*\n${esc(notice.requestedBy)}` },
      ],
    },
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: `*Arguments*${notice.maskedPaths.length > 0 ? ` (masked: ${esc(notice.maskedPaths.join(', '))})` : ''}\n${argumentsText(notice.arguments)}`,
      },
    },
    { type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open the request' }, url: notice.link, style: 'primary', action_id: 'open_request' }] },
    { type: 'context', elements: [{ type: 'mrkdwn', text: `Swarm Permissions · request \`${esc(notice.id)}\`` }] },
  );
  return { text, blocks };
}

export function bodyFor(kind: ChannelKind, notice: Notice, notificationId: string, now: number): string {
  return JSON.stringify(kind === 'slack' ? slackBody(notice, now) : webhookBody(notice, notificationId, now));
}
