'use client';

import { useEffect, useId, useState, type FormEvent } from 'react';
import kit from '@/app/(console)/_explorer/explorer.module.css';
import { ClearAll, WindowRow } from '@/app/(console)/_explorer/filters';
import { isCustomRange, type RelativeWindow } from '@/app/(console)/_explorer/time-window';
import styles from '@/app/(console)/denials/denials.module.css';
import { CustomRangeForm } from './custom-range-form';
import { FacetCombobox } from './facet-combobox';
import { filterParams, hasFilters, ROLE_OPTIONS, type ExplorerState } from './url-state';

interface Props {
  state: ExplorerState;
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

const draftOf = (s: Pick<ExplorerState, keyof Draft>): Draft => ({ q: s.q ?? '', agent: s.agent ?? '', tool: s.tool ?? '', ruleSource: s.ruleSource ?? '', role: s.role ?? '' });

export function FilterBar({ state, onChange, onClear }: Props) {
  const id = useId();
  const [draft, setDraft] = useState<Draft>(() => draftOf(state));
  const [customOpen, setCustomOpen] = useState(false);
  const custom = isCustomRange(state);

  // The URL is the truth: back/forward and clicks elsewhere (badges, cards, bars) must show up in the fields.
  const { q, agent, tool, ruleSource, role } = state;
  useEffect(() => {
    setDraft(draftOf({ q, agent, tool, ruleSource, role }));
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
  /** A suggesting field's value, typed (applied with Apply or Enter) or picked from its suggestions (applied at once). */
  const facet = (key: 'agent' | 'tool' | 'ruleSource') => ({
    value: draft[key],
    filterQuery: facetQuery,
    onInput: (v: string) => setDraft({ ...draft, [key]: v }),
    onPick: (v: string) => pickValue({ [key]: v }),
  });

  return (
    <section className={kit.filters} aria-label="Filters">
      <WindowRow
        state={state}
        labels={SHORT_LABELS}
        rangeNote={customOpen ? null : 'local time'}
        onPick={(w) => {
          setCustomOpen(false);
          onChange({ window: w, from: undefined, to: undefined });
        }}
      >
        <button type="button" aria-pressed={custom} aria-expanded={customOpen} aria-controls={`${id}-range`} onClick={() => setCustomOpen((o) => !o)}>
          Custom range
        </button>
      </WindowRow>
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
        <FacetCombobox field="agent" label="Agent" placeholder="Any agent" {...facet('agent')} />
        <FacetCombobox field="tool" label="Tool" placeholder="Any tool" {...facet('tool')} />
        <div>
          <FacetCombobox field="rule_source" label="Rule source" placeholder="e.g. policy" describedBy={`${id}-rule-hint`} {...facet('ruleSource')} />
          <span id={`${id}-rule-hint`} className={kit.srOnly}>
            A name without a colon, such as policy, matches the whole family. A prefix or another case also matches.
          </span>
        </div>
        <label>
          <span className={kit.fieldLabel}>User role</span>
          <select value={draft.role} onChange={(e) => pickValue({ role: e.target.value })}>
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
          <ClearAll shown={hasFilters(state)} onClear={onClear} />
        </div>
      </form>
    </section>
  );
}
