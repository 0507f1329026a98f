/**
 * Plain-words helpers for the approval queue: which values point at production, the short form of a request that
 * notes and dialogs use, the differences that tell duplicate requests apart, and the rule's reason without ids.
 */
import type { Approval } from './approval-types';

const PROD_WORDS = new Set(['prod', 'production', 'live', 'prd']);
/** argument names that say where a call lands: their values are checked word by word ("prod-eu" counts) */
const PLACE_KEY = /env|environment|target|stage|tier|cluster|namespace|deployment|destination|region|slot/i;

/** Does this argument value point at production? Whole value anywhere; any word of it for place-like keys. */
export function isProductionValue(key: string, value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const v = value.trim().toLowerCase();
  if (PROD_WORDS.has(v)) return true;
  if (!PLACE_KEY.test(key)) return false;
  return v.split(/[^a-z0-9]+/).some((w) => PROD_WORDS.has(w));
}

function argsObject(args: unknown): Record<string, unknown> | null {
  return args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : null;
}

/** A value short enough for a heading or a one-line summary (`max` Infinity: the whole value). */
function shortValue(value: unknown, max = 32): string {
  const text = value === '[REDACTED]' ? 'redacted' : typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * The arguments worth naming in one line: plain values first (ids, environments), at most `max`; each cut to a line's
 * length, or `whole` (a dialog, where a person decides: a value is shown whole and wraps).
 */
export function keyArguments(args: unknown, max = 3, whole = false): { key: string; value: string; production: boolean }[] {
  const o = argsObject(args);
  if (!o) return [];
  const entries = Object.entries(o);
  const plain = entries.filter(([, v]) => v === null || ['string', 'number', 'boolean'].includes(typeof v));
  const rest = entries.filter((e) => !plain.includes(e));
  return [...plain, ...rest].slice(0, max).map(([key, v]) => ({ key, value: shortValue(v, whole ? Infinity : 32), production: isProductionValue(key, v) }));
}

/** Who decided a request, in order, in words: "olivia, then admin" (both people of a two-person decision). */
export function decidedByText(a: Pick<Approval, 'deciders' | 'decided_by'>): string | null {
  const people = a.deciders?.length ? a.deciders : a.decided_by ? [a.decided_by] : [];
  return people.length ? people.join(', then ') : null;
}

/** "deployer → deploy_serving (model_id m-42, env prod)" */
export function summarize(a: Pick<Approval, 'agent' | 'tool' | 'arguments'>): string {
  const args = keyArguments(a.arguments);
  return `${a.agent} → ${a.tool}${args.length ? ` (${args.map((k) => `${k.key} ${k.value}`).join(', ')})` : ''}`;
}

/**
 * For requests with the same agent and tool as another pending one: the argument(s) that differ, as
 * "model_id m-43", keyed by approval id. Requests without a twin are absent from the map.
 */
export function distinguishers(items: readonly Approval[]): Map<string, string> {
  const groups = new Map<string, Approval[]>();
  for (const a of items) {
    const k = `${a.agent}\u0000${a.tool}`;
    groups.set(k, [...(groups.get(k) ?? []), a]);
  }
  const out = new Map<string, string>();
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    const objs = group.map((a) => argsObject(a.arguments) ?? {});
    const keys = [...new Set(objs.flatMap((o) => Object.keys(o)))];
    const differing = keys.filter((k) => new Set(objs.map((o) => JSON.stringify(o[k] ?? null))).size > 1);
    group.forEach((a, i) => {
      const o = objs[i] ?? {};
      const parts = differing.slice(0, 2).map((k) => (k in o ? `${k} ${shortValue(o[k], 24)}` : `no ${k}`));
      out.set(a.id, parts.length ? parts.join(', ') : `call ${a.tool_call_id ?? a.id.slice(-6)}`);
    });
  }
  return out;
}

/**
 * The rule's reason in plain words: no approval ids, the usual HITL wording rephrased, and the gate's description left
 * out when the reason repeats it (the card shows the description already).
 */
export function plainReason(a: Pick<Approval, 'reason' | 'tool' | 'gate' | 'gate_description'>): string | null {
  let r = (a.reason ?? '').replace(/\s*\(approval [^)]*\)/g, '').trim();
  if (a.gate_description) r = r.split(a.gate_description).join('').replace(/\s+/g, ' ').trim();
  if (!r) return null;
  const m = /^Tool "([^"]+)" needs a human approval \(gate "([^"]+)"\)\.?\s*([\s\S]*)$/.exec(r);
  if (m) return `Every ${m[1]} call needs a person to approve it first (the “${m[2]}” gate).${m[3] ? ` ${m[3]}` : ''}`;
  return r;
}

export const RISK_LABEL = { low: 'Low risk', medium: 'Medium risk', high: 'High risk' } as const;

/** "approval 1 of 2" wording for the step an approval by `me` would be. */
export function approvalStep(a: Approval): { text: string; completes: boolean } | null {
  if (a.approvals_required <= 1) return null;
  const n = a.approvals.length + 1;
  const first = a.approvals[0];
  if (n >= a.approvals_required) {
    return {
      text: `This completes ${a.approvals_required} of ${a.approvals_required} approvals${first ? ` (first approval by ${first.by})` : ''}; the agent can then run the call once.`,
      completes: true,
    };
  }
  return { text: `This is approval ${n} of ${a.approvals_required}: another operator must also approve before the agent can run it.`, completes: false };
}

/** Common reasons for a rejection, offered as choices (never pre-selected). */
export const PRESET_REASONS = [
  'The arguments look wrong',
  'Not during a change freeze',
  'Needs a review or a model card first',
  'Wrong environment',
] as const;

/**
 * The reason text after choosing `preset`: the preset's words go in front of what is written, replacing a preset
 * chosen before. The text box shows the result, so what is stored is what the person saw.
 */
export function withPreset(text: string, preset: string): string {
  const rest = text.trimStart();
  const earlier = PRESET_REASONS.find((p) => rest === p || rest.startsWith(`${p}:`));
  const own = (earlier ? rest.slice(earlier.length).replace(/^:\s*/, '') : rest).trim();
  return own ? `${preset}: ${own}` : preset;
}

/** The first argument that points the call at production, as "env prod", or null. */
function productionArgument(args: unknown): { key: string; value: string } | null {
  const o = argsObject(args);
  if (!o) return null;
  for (const [key, v] of Object.entries(o)) if (typeof v === 'string' && isProductionValue(key, v)) return { key, value: v.trim() };
  return null;
}

/**
 * The deliberate second step of approving production or high-risk calls: what the person must type, and why. One
 * request asks for the environment it points at (production) or else the tool's name (high risk); several whose words
 * differ ask for "approve all". Null when none of them needs the step (staging, low and medium risk keep one step).
 */
export function deliberateStep(list: readonly Approval[]): { word: string; why: string } | null {
  const needs = list.flatMap((a) => {
    const prod = productionArgument(a.arguments);
    if (prod) return [{ word: prod.value, why: `${a.tool} with ${prod.key} ${prod.value} runs in production` }];
    if (a.risk === 'high') return [{ word: a.tool, why: `${a.tool} is a high-risk call` }];
    return [];
  });
  if (needs.length === 0) return null;
  const words = [...new Set(needs.map((n) => n.word))];
  const why = [...new Set(needs.map((n) => n.why))].join('; ');
  return { word: words.length === 1 ? words[0]! : 'approve all', why };
}

/**
 * Where an approval dialog puts the focus when it opens, so that no approval starts on Approve: a call in production or
 * of high risk asks for a word typed (deliberateStep); one of medium risk for a box ticked on purpose; the others start
 * on Cancel, and Approve is a Tab away.
 */
export function approvalStart(list: readonly Approval[]): { kind: 'word'; word: string; why: string } | { kind: 'tick'; why: string } | { kind: 'cancel' } {
  const deliberate = deliberateStep(list);
  if (deliberate) return { kind: 'word', ...deliberate };
  const medium = list.filter((a) => a.risk === 'medium');
  if (medium.length > 0) return { kind: 'tick', why: `${[...new Set(medium.map((a) => a.tool))].join(', ')} ${medium.length === 1 ? 'is a' : 'are'} medium-risk ${medium.length === 1 ? 'call' : 'calls'}` };
  return { kind: 'cancel' };
}

/** Does the typed text confirm the step? Spaces around it and letter case do not matter; anything else does. */
export function confirmsStep(typed: string, word: string): boolean {
  return typed.trim().toLowerCase() === word.toLowerCase();
}
