'use client';

/**
 * A filter field that suggests the values present in the current window, with their counts (facets from
 * GET /api/v1/permissions/denials/facets), as the auditor types a prefix in any case. Keyboard: ArrowDown/ArrowUp move
 * through the suggestions, Enter picks the highlighted one (or, with none highlighted, applies what was typed, which
 * the server reads as a prefix or a case difference), Escape closes the list. The ARIA 1.2 combobox pattern.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { denialFacetsSchema, type DenialFacets } from '@/lib/http/responses';
import { apiGet, asApiError } from '@/app/_lib/api-client';
import kit from '@/app/(console)/_explorer/explorer.module.css';
import { count } from '@/app/(console)/_explorer/format';
import styles from '@/app/(console)/denials/denials.module.css';

export type FacetField = DenialFacets['field'];
type FacetValue = DenialFacets['values'][number];

interface Props {
  field: FacetField;
  label: string;
  placeholder: string;
  value: string;
  /** the API filter of the other fields (the window included), as query parameters */
  filterQuery: string;
  describedBy?: string;
  onInput: (value: string) => void;
  onPick: (value: string) => void;
}

export function FacetCombobox({ field, label, placeholder, value, filterQuery, describedBy, onInput, onPick }: Props) {
  const id = useId();
  const listId = `${id}-list`;
  const [open, setOpen] = useState(false);
  const [options, setOptions] = useState<FacetValue[]>([]);
  const [total, setTotal] = useState(0);
  const [active, setActive] = useState(-1);
  const [loaded, setLoaded] = useState(false);
  const request = useRef(0);

  useEffect(() => {
    if (!open) return;
    const n = ++request.current;
    const timer = window.setTimeout(async () => {
      const p = new URLSearchParams(filterQuery);
      p.delete(field);
      p.set('field', field);
      if (value.trim()) p.set('prefix', value.trim().replace(/\*$/, ''));
      p.set('limit', '12');
      try {
        const facets = await apiGet(`/api/v1/permissions/denials/facets?${p.toString()}`, denialFacetsSchema);
        if (n !== request.current) return;
        setOptions(facets.values);
        setTotal(facets.total);
      } catch (e) {
        if (n !== request.current) return;
        setOptions([]);
        // The server answered, but with nothing this field can offer: say so as for no values. Not reached: quiet.
        if (asApiError(e).status === 0) return;
        setTotal(0);
      }
      setLoaded(true);
      setActive(-1);
    }, 120);
    return () => window.clearTimeout(timer);
  }, [open, value, filterQuery, field]);

  const pick = (v: string) => {
    setOpen(false);
    setActive(-1);
    onPick(v);
  };

  return (
    <div className={styles.combo}>
      <label htmlFor={`${id}-input`} className={kit.fieldLabel}>
        {label}
      </label>
      <input
        id={`${id}-input`}
        role="combobox"
        aria-autocomplete="list"
        aria-expanded={open && options.length > 0}
        aria-controls={listId}
        aria-activedescendant={open && active >= 0 ? `${id}-opt-${active}` : undefined}
        aria-describedby={describedBy}
        autoComplete="off"
        value={value}
        placeholder={placeholder}
        maxLength={200}
        onFocus={() => setOpen(true)}
        onBlur={() => window.setTimeout(() => setOpen(false), 150)}
        onChange={(e) => {
          onInput(e.target.value);
          setOpen(true);
        }}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') {
            e.preventDefault();
            setOpen(true);
            setActive((a) => (options.length ? (a + 1) % options.length : -1));
          } else if (e.key === 'ArrowUp') {
            e.preventDefault();
            setActive((a) => (options.length ? (a <= 0 ? options.length - 1 : a - 1) : -1));
          } else if (e.key === 'Enter' && open && active >= 0 && options[active]) {
            e.preventDefault();
            pick(options[active]!.value);
          } else if (e.key === 'Escape' && open) {
            e.preventDefault();
            e.stopPropagation();
            setOpen(false);
            setActive(-1);
          }
        }}
      />
      {open && options.length > 0 ? (
        <ul id={listId} role="listbox" aria-label={`${label} values in this window`} className={styles.comboList}>
          {options.map((o, i) => (
            <li
              key={`${o.family ? 'f' : 'v'}:${o.value}`}
              id={`${id}-opt-${i}`}
              role="option"
              aria-selected={i === active}
              className={i === active ? styles.comboActive : undefined}
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => pick(o.value)}
            >
              <span className={styles.comboValue}>
                {o.value}
                {o.family ? <span className="muted"> (every {o.value}:*)</span> : null}
              </span>
              <span className={styles.comboCount} aria-label={`${count(o.count)} denials`}>
                {count(o.count)}
              </span>
            </li>
          ))}
          {total > options.length ? <li className={styles.comboMore} aria-hidden="true">{count(total - options.length)} more: type to narrow</li> : null}
        </ul>
      ) : null}
      {open && loaded && options.length === 0 && value.trim() ? (
        <p className={styles.comboNone} role="status">
          No {label.toLowerCase()} starting with “{value.trim()}” in this window.
        </p>
      ) : null}
    </div>
  );
}
