import { Notice } from '@/app/(console)/_explorer/explorer-head';
import { describeWindow } from '@/app/(console)/_explorer/format';
import styles from '@/app/(console)/denials/denials.module.css';
import { pinWindow, type ExplorerState } from './url-state';

/** What "Copy link for this exact window" copied: the window and newest denial it holds, and the link itself. */
export function CopiedLinkNotice({ url, view, state, onDismiss }: { url: string; view: ExplorerState | undefined; state: ExplorerState; onDismiss: () => void }) {
  return (
    <Notice testId="copied-link">
      Link copied for the window {describeWindow(view ?? pinWindow(state))}
      {view?.untilId !== undefined ? `, up to denial #${view.untilId}` : ''}: <code className={styles.copiedUrl}>{url}</code>{' '}
      <button type="button" className="button button-quiet" onClick={onDismiss}>
        Dismiss
      </button>
    </Notice>
  );
}
