'use client';

import { useEffect, useId, useState, type FormEvent } from 'react';
import styles from '@/app/(console)/denials/denials.module.css';
import { localDateTime } from './format';
import { FacetCombobox } from './facet-combobox';
import { filterParams, hasFilters, isCustomRange, ROLE_OPTIONS, WINDOW_LABELS, WINDOWS, type ExplorerState, type RelativeWindow } from './url-state';

export interface Suggestions {
  agents: string[];
  tools: string[];
  ruleSources: string[];
}

interface Props {
  state: ExplorerState;
  /** the declared names (the page's first render); the fields suggest from the denials themselves */
  suggestions?: Suggestions;
  onChange: (change: Partial<ExplorerState>) => void;
  onClear: () => void;
}

const SHORT_LABELS: Record<RelativeWindow, string> = { '1h': '1 hour', '24h': '24 hours', '7d': '7 days', '30d': '30 days', all: 'All time' };

/** `datetime-local` speaks local time without a zone: YYYY-MM-DDTHH:MM. */
const toLocalInput = (seconds: number | undefined) => (seconds === undefined ? '' : localDateTime(seconds).slice(0, 16).replace(' ', 'T'));
const fromLocalInput = (value: string) => {
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms / 1000 : undefined;
};

interface Draft {
  q: string;
  agent: string;
  tool: string;
  ruleSource: string;
  role: string;
}

const draftOf = (s: ExplorerState): Draft => ({ q: s.q ?? '', agent: s.agent ?? '', tool: s.tool ?? '', ruleSource: s.ruleSource ?? '', role: s.role ?? '' });

export function FilterBar({ state, onChange, onClear }: Props) {
  const id = useId();
  const [draft, setDraft] = useState<Draft>(() => draftOf(state));
  const [customOpen, setCustomOpen] = useState(false);
  const [range, setRange] = useState({ from: toLocalInput(state.from), to: toLocalInput(state.to) });
  const [rangeError, setRangeError] = useState<string | undefined>();
  const custom = isCustomRange(state);

  // The URL is the truth: back/forward and clicks elsewhere (badges, cards, bars) must show up in the fields.
  const { q, agent, tool, ruleSource, role, from, to } = state;
  useEffect(() => {
    setDraft({ q: q ?? '', agent: agent ?? '', tool: tool ?? '', ruleSource: ruleSource ?? '', role: role ?? '' });
  }, [q, agent, tool, ruleSource, role]);
  useEffect(() => {
    setRange({ from: toLocalInput(from), to: toLocalInput(to) });
  }, [from, to]);

  const apply = (d: Draft) => {
    const roleValue = ROLE_OPTIONS.find((r) => r === d.role);
    onChange({ q: d.q.trim() || undefined, agent: d.agent.trim() || undefined, tool: d.tool.trim() || undefined, ruleSource: d.ruleSource.trim() || undefined, role: roleValue });
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    apply(draft);
  };
  const applyRange = (e: FormEvent) => {
    e.preventDefault();
    const f = range.from ? fromLocalInput(range.from) : undefined;
    const t = range.to ? fromLocalInput(range.to) : undefined;
    if (f === undefined && t === undefined) return setRangeError('Give a start, an end, or both.');
    if (f !== undefined && t !== undefined && f > t) return setRangeError('The start is after the end.');
    setRangeError(undefined);
    setCustomOpen(false);
    // The end minute is included whole: "to 14:05" means up to 14:05:59.
    onChange({ from: f, to: t === undefined ? undefined : t + 59.999, window: 'all' });
  };
  const dirty = JSON.stringify(draft) !== JSON.stringify(draftOf(state));
  // Suggestions come from the denials of the applied filter (the window included), each field's own filter left out.
  const facetQuery = filterParams(state).toString();
  const pickValue = (change: Partial<Draft>) => {
    const next = { ...draft, ...change };
    setDraft(next);
    apply(next);
  };

  return (
    <section className={styles.filters} aria-label="Filters">
      <div className={styles.windowRow}>
        <span className={styles.fieldLabel} id={`${id}-window`}>
          Time window
        </span>
        <div className={styles.segmented} role="group" aria-labelledby={`${id}-window`}>
          {WINDOWS.map((w) => (
            <button
              key={w}
              type="button"
              aria-pressed={!custom && state.window === w}
              title={WINDOW_LABELS[w]}
              onClick={() => {
                setCustomOpen(false);
                onChange({ window: w, from: undefined, to: undefined });
              }}
            >
              {SHORT_LABELS[w]}
            </button>
          ))}
          <button type="button" aria-pressed={custom} aria-expanded={customOpen} aria-controls={`${id}-range`} onClick={() => setCustomOpen((o) => !o)}>
            Custom range
          </button>
        </div>
        {custom && !customOpen ? (
          <span className={styles.rangeText}>
            {state.from !== undefined ? localDateTime(state.from).slice(0, 16) : 'the beginning'} → {state.to !== undefined ? localDateTime(state.to).slice(0, 16) : 'now'}
            <span className="muted"> (local time)</span>
          </span>
        ) : null}
      </div>
      {customOpen ? (
        <form id={`${id}-range`} className={styles.rangeForm} onSubmit={applyRange} aria-label="Custom range">
          <label>
            <span className={styles.fieldLabel}>From (local time)</span>
            <input type="datetime-local" value={range.from} onChange={(e) => setRange((r) => ({ ...r, from: e.target.value }))} />
          </label>
          <label>
            <span className={styles.fieldLabel}>To (local time)</span>
            <input type="datetime-local" value={range.to} onChange={(e) => setRange((r) => ({ ...r, to: e.target.value }))} />
          </label>
          <button type="submit" className="button button-primary">
            Apply range
          </button>
          <button type="button" className="button" onClick={() => setCustomOpen(false)}>
            Cancel
          </button>
          {rangeError ? (
            <p role="alert" className={styles.inlineError}>
              {rangeError}
            </p>
          ) : null}
        </form>
      ) : null}
      <form className={styles.fieldRow} onSubmit={submit} role="search" aria-label="Filter denials">
        <label className={styles.searchField}>
          <span className={styles.fieldLabel}>Search reason, agent, tool, path and arguments</span>
          <input type="search" value={draft.q} placeholder="e.g. m-42, batch_runner, &quot;trials&quot;: 500" maxLength={200} onChange={(e) => setDraft({ ...draft, q: e.target.value })} />
        </label>
        <FacetCombobox
          field="agent"
          label="Agent"
          placeholder="Any agent"
          value={draft.agent}
          filterQuery={facetQuery}
          onInput={(v) => setDraft({ ...draft, agent: v })}
          onPick={(v) => pickValue({ agent: v })}
        />
        <FacetCombobox
          field="tool"
          label="Tool"
          placeholder="Any tool"
          value={draft.tool}
          filterQuery={facetQuery}
          onInput={(v) => setDraft({ ...draft, tool: v })}
          onPick={(v) => pickValue({ tool: v })}
        />
        <div>
          <FacetCombobox
            field="rule_source"
            label="Rule source"
            placeholder="e.g. policy"
            value={draft.ruleSource}
            filterQuery={facetQuery}
            describedBy={`${id}-rule-hint`}
            onInput={(v) => setDraft({ ...draft, ruleSource: v })}
            onPick={(v) => pickValue({ ruleSource: v })}
          />
          <span id={`${id}-rule-hint`} className={styles.srOnly}>
            A name without a colon, such as policy, matches the whole family. A prefix or another case also matches.
          </span>
        </div>
        <label>
          <span className={styles.fieldLabel}>User role</span>
          <select
            value={draft.role}
            onChange={(e) => {
              const next = { ...draft, role: e.target.value };
              setDraft(next);
              apply(next);
            }}
          >
            <option value="">Any role</option>
            {ROLE_OPTIONS.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <div className={styles.fieldActions}>
          <button type="submit" className={`button ${dirty ? 'button-primary' : ''}`}>
            Apply
          </button>
          <button type="button" className={`button button-quiet ${hasFilters(state) ? '' : styles.invisible}`} onClick={onClear} aria-hidden={!hasFilters(state)} tabIndex={hasFilters(state) ? undefined : -1}>
            Clear all
          </button>
        </div>
      </form>
    </section>
  );
}
