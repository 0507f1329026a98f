'use client';

import { useCallback, useEffect, useMemo, useState } from 'react';
import { useSession } from '@/app/_components/session-watch';
import { normalize, type Approval } from './approval-types';
import { distinguishers } from './approval-text';
import { ApprovalCard } from './approval-card';
import { ApproveDialog } from './approve-dialog';
import { McpNamingProvider } from '@/app/(console)/_mcp/mcp-naming';
import { NO_MCP_NAMING, type McpNaming } from '@/app/(console)/_mcp/mcp-tool-name';
import { blockedReason } from './blocked-reason';
import { CardActions, CardTimes } from './card-parts';
import { DeepLinkResult, type DeepLink } from './deep-link-result';
import { usePublishPendingCount } from './pending-count';
import { isFiltered, matchesFilter, type QueueFilter } from './queue-filter';
import { QueueFilters, useQueueFilter } from './queue-filters';
import { QueueNotes, useNotes } from './notes';
import { RejectDialog } from './reject-dialog';
import { useCurrentCard } from './use-current-card';
import { useDecide } from './use-decide';
import { useDecisionDialogs } from './use-decision-dialogs';
import { usePendingPoll } from './use-pending-poll';
import { useQueueClock } from './use-queue-clock';
import { useQueueShortcuts, useShortcutsSetting } from './use-queue-shortcuts';
import { useSelection } from './use-selection';
import styles from './approvals.module.css';

export type { DeepLink } from './deep-link-result';

interface Props {
  initial: Approval[];
  canDecide: boolean;
  /** the signed-in principal: a card they approved already, or requested, offers no approve */
  me: string;
  myRole?: string;
  serverNow?: number;
  /** the filter and view the URL asked for */
  initialFilter?: QueueFilter;
  /** /approvals?request=<id> */
  deepLink?: DeepLink | null;
  /** how MCP tools are named (config/mcp.yaml): their cards show the server and the tool apart */
  mcpNaming?: McpNaming;
}

/**
 * The pending queue. Safe under time pressure: nothing is current until the operator moves (j/k, Tab or a click), and
 * no keystroke decides on its own: approving always goes through a confirmation that restates the call. The server
 * renders the queue as it was; a poll keeps it current (use-pending-poll.ts) until the session ends.
 */
export function ApprovalQueue({ initial, canDecide, me, myRole, serverNow, initialFilter, deepLink = null, mcpNaming = NO_MCP_NAMING }: Props) {
  const { ended, markEnded } = useSession();
  const [items, setItems] = useState(initial);
  /** true once the page is interactive (the shortcuts listen); tests wait for it */
  const [ready, setReady] = useState(false);
  useEffect(() => setReady(true), []);
  const [shortcuts, setShortcuts] = useShortcutsSetting();
  const clock = useQueueClock(serverNow);
  const { notes, note } = useNotes();
  const { filter, updateFilter } = useQueueFilter(initialFilter);
  /** the request a link pointed at, while it is still the one the person looks at */
  const [highlightId, setHighlightId] = useState<string | null>(deepLink?.found?.status === 'pending' ? deepLink.id : null);

  const all = useMemo(() => items.map(normalize), [items]);
  // the request a link pointed at stays in view whatever the filter says
  const list = useMemo(() => all.filter((a) => a.id === highlightId || matchesFilter(a, filter)), [all, filter, highlightId]);
  const twins = useMemo(() => distinguishers(items), [items]);
  const ids = useMemo(() => items.map((a) => a.id), [items]);
  usePublishPendingCount(items.length);

  const card = useCurrentCard(list, highlightId);
  const selection = useSelection(ids);
  const { decide, busy, mine, decidedHere } = useDecide({ setItems, note, markEnded });
  const blocked = useCallback((a: Approval) => blockedReason(a, { me, myRole, mine }), [me, myRole, mine]);
  const dialogs = useDecisionDialogs({ list, blocked, note, ended });
  usePendingPoll({
    items,
    decidedHere,
    dialog: dialogs,
    ended,
    markEnded,
    note,
    onPolled: (approvals) => {
      setItems(approvals);
      clock.tick();
    },
  });
  useQueueShortcuts({
    enabled: shortcuts && !dialogs.isOpen && !busy && !ended,
    canDecide,
    current: card.current,
    currentIndex: card.currentIndex,
    selected: selection.selected,
    moveTo: card.moveTo,
    openApprove: dialogs.openApprove,
    openReject: dialogs.openReject,
    toggle: selection.toggle,
    note,
  });

  // The tab title carries the count, so a queue in a background tab is seen filling up.
  useEffect(() => {
    document.title = ended ? 'Signed out · Approvals · Swarm Permissions' : `${items.length ? `(${items.length}) ` : ''}Approvals · Swarm Permissions`;
  }, [items.length, ended]);

  /** Decide, then move on from the card that was current when the operator confirmed. */
  const confirm = (targets: readonly Approval[], action: 'approve' | 'reject', reason?: string) => {
    const from = card.currentIndex;
    dialogs.closeAll();
    void decide(targets, action, reason, () => {
      card.advanceFrom(from);
      selection.clear();
    });
  };

  const decideOff = busy || ended;
  const staleSince = ended && clock.asOf !== null ? clock.asOf : null;
  const linked = deepLink && deepLink.found?.status !== 'pending' ? deepLink : null;
  const selected = [...selection.selected];

  return (
    <McpNamingProvider naming={mcpNaming}>
      <section aria-labelledby="queue-title" data-ready={ready ? 'true' : undefined} data-live={ready ? String(!ended) : undefined}>
        {linked ? <DeepLinkResult link={linked} /> : null}
        {/* How many wait, the bulk actions on the selection, and the shortcuts switch (with its keys). */}
        <div className={styles.toolbar}>
          <h2 id="queue-title" className={styles.count} ref={card.heading} tabIndex={-1}>
            {items.length === 0 ? 'Nothing is waiting' : isFiltered(filter) ? `${list.length} of ${items.length} waiting shown, oldest first` : `${items.length} waiting, oldest first`}
          </h2>
          {canDecide && selected.length > 0 ? (
            <div className={styles.bulk} role="group" aria-label="Selected requests">
              <span>{selected.length} selected</span>
              <button type="button" className="button button-primary" disabled={decideOff} onClick={() => dialogs.openApprove(selected)}>
                Approve selected…
              </button>
              <button type="button" className="button button-danger" disabled={decideOff} onClick={() => dialogs.openReject(selected)}>
                Reject selected…
              </button>
              <button type="button" className="button button-quiet" disabled={busy} onClick={selection.clear}>
                Clear
              </button>
            </div>
          ) : null}
          <label className={styles.shortcutToggle}>
            <input type="checkbox" checked={shortcuts} onChange={(e) => setShortcuts(e.target.checked)} /> Keyboard shortcuts
            <span className="muted"> (j/k move{canDecide ? ', a approve, r reject, x select; each asks first' : ''})</span>
          </label>
        </div>
        <QueueFilters all={all} filter={filter} onChange={updateFilter} />
        {ended && canDecide ? (
          <p className={styles.endedNote} id="queue-ended">
            Approving and rejecting are off until you sign in again.
          </p>
        ) : null}
        <QueueNotes notes={notes} />
        {items.length === 0 ? (
          <div className="panel empty">No gated call is waiting for a decision. {ended ? 'Sign in again to see new requests.' : 'New requests appear here by themselves.'}</div>
        ) : list.length === 0 ? (
          <div className="panel empty">
            No waiting request matches this filter; {items.length} {items.length === 1 ? 'waits' : 'wait'} in all.
          </div>
        ) : (
          <ol className={`${styles.queue} ${filter.compact ? styles.compactQueue : ''}`}>
            {list.map((a) => {
              const isCurrent = a.id === card.currentId;
              return (
                <ApprovalCard
                  key={a.id}
                  a={a}
                  twin={twins.get(a.id)}
                  compact={filter.compact}
                  isCurrent={isCurrent}
                  highlighted={a.id === highlightId && isCurrent}
                  select={canDecide ? { checked: selection.selected.has(a.id), onToggle: () => selection.toggle(a.id) } : null}
                  me={me}
                  now={clock.now}
                  times={<CardTimes a={a} now={clock.now} staleSince={staleSince} />}
                  actions={
                    canDecide ? (
                      <CardActions blocked={blocked(a)} off={decideOff} ended={ended} onApprove={() => dialogs.openApprove([a.id])} onReject={() => dialogs.openReject([a.id])} />
                    ) : null
                  }
                  cardRef={card.cardRef(a.id)}
                  onFocus={() => {
                    card.setCurrentId(a.id);
                    // the link's highlight gives way once the person moves on
                    if (highlightId && a.id !== highlightId) setHighlightId(null);
                  }}
                />
              );
            })}
          </ol>
        )}
        {dialogs.approving ? (
          <ApproveDialog
            candidates={dialogs.approving}
            onCancel={dialogs.closeAll}
            onConfirm={(chosen) => confirm(dialogs.approving?.filter((c) => chosen.includes(c.a.id)).map((c) => c.a) ?? [], 'approve')}
          />
        ) : null}
        {dialogs.rejecting ? <RejectDialog items={dialogs.rejecting} onCancel={dialogs.closeAll} onConfirm={(reason) => confirm(dialogs.rejecting ?? [], 'reject', reason)} /> : null}
      </section>
    </McpNamingProvider>
  );
}
