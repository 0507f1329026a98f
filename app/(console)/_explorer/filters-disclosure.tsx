'use client';

import { useId, useState, type ReactNode } from 'react';
import styles from './explorer.module.css';

/**
 * On a phone the filters sit behind a "Filters" button (a disclosure: a real button with aria-expanded, so Enter and
 * Space open it), and the results come first. `active`: how many filters are set, said on the button so a filtered
 * view is never mistaken for the whole trail. On a wide screen the filters are shown as they are.
 */
export function FiltersDisclosure({ narrow, active, children }: { narrow: boolean; active: number; children: ReactNode }) {
  const id = useId();
  const [open, setOpen] = useState(false);
  if (!narrow) return <>{children}</>;
  return (
    <div className={styles.disclosure}>
      <button type="button" className="button" aria-expanded={open} aria-controls={id} onClick={() => setOpen((o) => !o)} data-testid="filters-toggle">
        {open ? 'Hide filters' : 'Filters'}
        {active > 0 ? ` (${active} set)` : ''}
      </button>
      <div id={id} hidden={!open}>
        {children}
      </div>
    </div>
  );
}
