import { count } from '@/app/(console)/_explorer/format';
import styles from '@/app/(console)/denials/denials.module.css';

/** "14 new denials since this view loaded. Show them": in a corner, so its arrival moves nothing the auditor reads. */
export function LiveTailNotice({ newCount, onShow }: { newCount: number; onShow: () => void }) {
  return (
    <div className={styles.tail} role="status" aria-live="polite" data-testid="live-tail">
      {newCount > 0 ? (
        <>
          <span>
            {count(newCount)} new {newCount === 1 ? 'denial' : 'denials'} since this view loaded.
          </span>{' '}
          <button type="button" className="button button-primary" onClick={onShow}>
            Show {newCount === 1 ? 'it' : 'them'}
          </button>
        </>
      ) : null}
    </div>
  );
}
