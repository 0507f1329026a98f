'use client';

import { useEffect, useId, useState, type FormEvent } from 'react';
import kit from '@/app/(console)/_explorer/explorer.module.css';
import { isCustomRange, type RelativeWindow } from '@/app/(console)/_explorer/time-window';
import { RangeText, WindowButtons } from '@/app/(console)/_explorer/window-buttons';
import styles from '@/app/(console)/denials/denials.module.css';
import { CustomRangeForm } from './custom-range-form';
import { FacetCombobox } from './facet-combobox';
import { filterParams, hasFilters, ROLE_OPTIONS, type ExplorerState } from './url-state';

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
  const custom = isCustomRange(state);

  // The URL is the truth: back/forward and clicks elsewhere (badges, cards, bars) must show up in the fields.
  const { q, agent, tool, ruleSource, role } = state;
  useEffect(() => {
    setDraft({ q: q ?? '', agent: agent ?? '', tool: tool ?? '', ruleSource: ruleSource ?? '', role: role ?? '' });
  }, [q, agent, tool, ruleSource, role]);

  const apply = (d: Draft) => {
    const roleValue = ROLE_OPTIONS.find((r) => r === d.role);
    onChange({ q: d.q.trim() || undefined, agent: d.agent.trim() || undefined, tool: d.tool.trim() || undefined, ruleSource: d.ruleSource.trim() || undefined, role: roleValue });
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    apply(draft);
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
    <section className={kit.filters} aria-label="Filters">
      <div className={kit.windowRow}>
        <span className={kit.fieldLabel} id={`${id}-window`}>
          Time window
        </span>
        <WindowButtons
          labelId={`${id}-window`}
          state={state}
          labels={SHORT_LABELS}
          onPick={(w) => {
            setCustomOpen(false);
            onChange({ window: w, from: undefined, to: undefined });
          }}
        >
          <button type="button" aria-pressed={custom} aria-expanded={customOpen} aria-controls={`${id}-range`} onClick={() => setCustomOpen((o) => !o)}>
            Custom range
          </button>
        </WindowButtons>
        {custom && !customOpen ? <RangeText state={state} note="local time" /> : null}
      </div>
      {customOpen ? (
        <CustomRangeForm
          id={`${id}-range`}
          from={state.from}
          to={state.to}
          onCancel={() => setCustomOpen(false)}
          onApply={(range) => {
            setCustomOpen(false);
            onChange(range);
          }}
        />
      ) : null}
      <form className={styles.fieldRow} onSubmit={submit} role="search" aria-label="Filter denials">
        <label className={styles.searchField}>
          <span className={kit.fieldLabel}>Search reason, agent, tool, path and arguments</span>
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
          <span id={`${id}-rule-hint`} className={kit.srOnly}>
            A name without a colon, such as policy, matches the whole family. A prefix or another case also matches.
          </span>
        </div>
        <label>
          <span className={kit.fieldLabel}>User role</span>
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
        <div className={kit.fieldActions}>
          <button type="submit" className={`button ${dirty ? 'button-primary' : ''}`}>
            Apply
          </button>
          <button type="button" className={`button button-quiet ${hasFilters(state) ? '' : kit.invisible}`} onClick={onClear} aria-hidden={!hasFilters(state)} tabIndex={hasFilters(state) ? undefined : -1}>
            Clear all
          </button>
        </div>
      </form>
    </section>
  );
}
