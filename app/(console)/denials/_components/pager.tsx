import { count } from '@/app/(console)/_explorer/format';
import styles from '@/app/(console)/denials/denials.module.css';
import { PAGE_SIZES, type ExplorerState } from './url-state';

interface Props {
  state: ExplorerState;
  /** the previous page's cursor is known (not a page opened from a link) */
  prevKnown: boolean;
  /** the next page's cursor, once the page on screen is the view's own; null: the last page */
  nextCursor: string | null;
  onFirst: () => void;
  onPrevious: () => void;
  onNext: (cursor: string) => void;
  onSize: (size: number) => void;
}

/** First, previous and next page by cursor, the page number, and how many rows a page holds. */
export function Pager({ state, prevKnown, nextCursor, onFirst, onPrevious, onNext, onSize }: Props) {
  return (
    <nav className={styles.pager} aria-label="Pages">
      <button type="button" className="button button-quiet" disabled={state.page <= 1} onClick={onFirst}>
        « First
      </button>
      <button
        type="button"
        className="button button-quiet"
        disabled={state.page <= 1 || !prevKnown}
        title={state.page > 1 && !prevKnown ? 'This page was opened from a link: go to the first page instead' : undefined}
        onClick={onPrevious}
      >
        ‹ Previous
      </button>
      <span className={styles.pageNo}>Page {count(state.page)}</span>
      <button type="button" className="button button-quiet" disabled={!nextCursor} onClick={() => nextCursor && onNext(nextCursor)}>
        Next ›
      </button>
      <label className={styles.pageSize}>
        <span>Rows</span>
        <select value={state.size} onChange={(e) => onSize(Number(e.target.value))}>
          {PAGE_SIZES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
    </nav>
  );
}
