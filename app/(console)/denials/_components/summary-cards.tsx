'use client';

import kit from '@/app/(console)/_explorer/explorer.module.css';
import styles from '@/app/(console)/denials/denials.module.css';
import type { DenialSummary } from '@/lib/http/responses';
import { count, describeWindow } from '@/app/(console)/_explorer/format';
import { RuleBadge } from './rule-badge';
import type { ExplorerState } from './url-state';

interface Props {
  state: ExplorerState;
  summary: DenialSummary | undefined;
  stale: boolean;
  onFilter: (change: Partial<ExplorerState>) => void;
}

/** One ranked list: a name that filters when clicked, its count, and a bar for its share of the total. */
function Ranking<T extends string | null>({
  title,
  items,
  total,
  render,
  empty,
}: {
  title: string;
  items: { value: T; count: number }[];
  total: number;
  render: (value: T) => React.ReactNode;
  empty: string;
}) {
  return (
    <section className={styles.card} aria-label={title}>
      <h2 className={styles.cardTitle}>{title}</h2>
      {items.length === 0 ? (
        <p className={styles.cardEmpty}>{empty}</p>
      ) : (
        <ol className={styles.ranking}>
          {items.map((item) => (
            <li key={String(item.value)}>
              <span className={styles.rankName}>{render(item.value)}</span>
              <span className={styles.rankCount}>{count(item.count)}</span>
              <span className={styles.rankBar} aria-hidden="true">
                <span style={{ width: `${Math.max(2, (item.count / Math.max(total, 1)) * 100)}%` }} />
              </span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

export function SummaryCards({ state, summary, stale, onFilter }: Props) {
  if (!summary) {
    return (
      <div className={styles.cards} aria-busy="true" data-testid="summary">
        {['Denials', 'Top agents', 'Top rule sources', 'Top tools'].map((t) => (
          <section key={t} className={`${styles.card} ${kit.skeletonCard}`} aria-label={t}>
            <h2 className={styles.cardTitle}>{t}</h2>
            <span className={kit.skeletonLine} />
            <span className={kit.skeletonLine} />
          </section>
        ))}
      </div>
    );
  }
  const total = summary.total;
  return (
    <div className={`${styles.cards} ${stale ? kit.stale : ''}`} aria-busy={stale} data-testid="summary">
      <section className={`${styles.card} ${styles.totalCard}`} aria-label="Denials">
        <h2 className={styles.cardTitle}>Denials</h2>
        <p className={styles.total} data-testid="summary-total">
          {count(total)}
        </p>
        <p className={styles.cardNote}>{describeWindow(state)}</p>
        {summary.families.length > 0 ? (
          <p className={styles.cardNote}>
            {summary.families
              .slice(0, 3)
              .map((f) => `${Math.round((f.count / Math.max(total, 1)) * 100)}% ${f.value}`)
              .join(' · ')}
          </p>
        ) : null}
      </section>
      <Ranking
        title="Top agents"
        items={summary.top_agents}
        total={total}
        empty="No agents in this view."
        render={(agent) =>
          agent === null ? (
            <span className="muted" title="HTTP requests and sign-ins name no agent">
              no agent (HTTP)
            </span>
          ) : (
            <button type="button" className={styles.linkButton} title={`Show only agent ${agent}`} onClick={() => onFilter({ agent })}>
              {agent}
            </button>
          )
        }
      />
      <Ranking
        title="Top rule sources"
        items={summary.top_rule_sources}
        total={total}
        empty="No rule sources in this view."
        render={(rule) => <RuleBadge ruleSource={rule} onFilter={(ruleSource) => onFilter({ ruleSource })} />}
      />
      <Ranking
        title="Top tools"
        items={summary.top_tools}
        total={total}
        empty="No tools in this view."
        render={(tool) => (
          <button type="button" className={styles.linkButton} title={`Show only tool ${tool}`} onClick={() => onFilter({ tool })}>
            <code>{tool}</code>
          </button>
        )}
      />
    </div>
  );
}
