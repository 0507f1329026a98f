'use client';

import { useState } from 'react';
import type { DenialDetail } from '@/lib/http/responses';
import type { Resource } from '@/app/_lib/use-api-resource';
import kit from '@/app/(console)/_explorer/explorer.module.css';
import { DetailPanel } from '@/app/(console)/_explorer/detail-panel';
import type { OpenRow } from '@/app/(console)/_explorer/use-open-row';
import styles from '@/app/(console)/denials/denials.module.css';
import { DecisionTrace } from './decision-trace';
import { DenialArguments } from './denial-arguments';
import { DenialFacts } from './denial-facts';
import { familyInfo, ruleSourceFamily } from '@/lib/audit/denials/vocabulary';
import { RuleBadge } from './rule-badge';
import type { ExplorerState } from './url-state';

interface Props {
  id: number;
  detail: Resource<DenialDetail>;
  openRow: OpenRow;
  onFilter: (change: Partial<ExplorerState>) => void;
}

/** One denial in full: who was refused what, by which rule and why, its arguments and how the decision was made. */
export function DenialPanel({ id, detail, openRow, onFilter }: Props) {
  const [copied, setCopied] = useState(false);
  const d = detail.data?.id === id ? detail.data : undefined;
  const copyLink = async () => {
    try {
      await navigator.clipboard.writeText(window.location.href);
      setCopied(true);
      setTimeout(() => setCopied(false), 2000);
    } catch {
      setCopied(false);
    }
  };
  const error = detail.error;

  return (
    <DetailPanel
      id={id}
      noun="Denial"
      openRow={openRow}
      stepLabels={{ prev: 'Previous denial in the list', next: 'Next denial in the list' }}
      closeText="Close"
    >
      {error ? (
        <div className={kit.panelError} role="alert">
          <p>{error.status === 404 ? `There is no denial #${id}.` : `The denial could not be loaded: ${error.detail}`}</p>
          {error.status !== 404 ? (
            <button type="button" className="button" onClick={detail.reload}>
              Try again
            </button>
          ) : null}
        </div>
      ) : !d ? (
        <p className="muted" aria-busy={detail.loading}>
          Loading the denial…
        </p>
      ) : (
        <>
          <p className={kit.panelLead}>
            {d.tool_name === 'http' ? (
              <>
                <strong>{d.principal ?? 'Someone'}</strong> ({d.user_role ?? 'no role'}) was refused <code>{`${d.http_method ?? ''} ${d.http_path ?? ''}`.trim()}</code>
              </>
            ) : (
              <>
                <strong>{d.agent_name ?? 'An agent'}</strong> tried <code>{d.tool_name}</code> and was denied
              </>
            )}{' '}
            by <RuleBadge ruleSource={d.rule_source} onFilter={(ruleSource) => onFilter({ ruleSource })} />
          </p>
          <p className={styles.reasonBlock}>{d.reason ?? 'No reason was recorded.'}</p>
          <p className={kit.fieldNote}>
            The <b>{ruleSourceFamily(d.rule_source)}</b> family: {familyInfo(ruleSourceFamily(d.rule_source)).meaning}.
          </p>
          <DenialFacts denial={d} />
          <div className={kit.panelActions}>
            {d.agent_name ? (
              <button type="button" className="button" onClick={() => onFilter({ agent: d.agent_name ?? undefined })}>
                Only this agent
              </button>
            ) : null}
            <button type="button" className="button" onClick={() => onFilter({ ruleSource: d.rule_source })}>
              Only this rule
            </button>
            <button type="button" className="button" onClick={() => onFilter({ tool: d.tool_name })}>
              Only this tool
            </button>
            <button type="button" className="button button-quiet" onClick={copyLink}>
              {copied ? 'Link copied' : 'Copy link'}
            </button>
          </div>
          <h3 className={kit.panelSection}>Arguments</h3>
          <DenialArguments json={d.arguments_json} />
          {d.masked_paths.length ? (
            <p className={kit.fieldNote} data-testid="denial-masked">
              masked: {d.masked_paths.join(', ')}
            </p>
          ) : null}
          <h3 className={kit.panelSection}>How the decision was made</h3>
          <DecisionTrace denial={d} />
        </>
      )}
    </DetailPanel>
  );
}
