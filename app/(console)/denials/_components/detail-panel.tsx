'use client';

import { useEffect, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import styles from '@/app/(console)/denials/denials.module.css';
import type { ApiError, DenialDetail } from './api';
import { familyInfo, ruleSourceFamily } from './families';
import { localDateTime, localZone, utcDateTime } from './format';
import { RuleBadge } from './rule-badge';
import type { ExplorerState } from './url-state';

interface Props {
  id: number;
  detail: DenialDetail | undefined;
  error: ApiError | undefined;
  loading: boolean;
  onClose: () => void;
  onFilter: (change: Partial<ExplorerState>) => void;
  onStep?: (delta: 1 | -1) => void;
  canStep: { prev: boolean; next: boolean };
  onRetry: () => void;
}

const REDACTED = '[REDACTED]';

/** Pretty JSON with redacted values and cut markers set apart, so an auditor sees at once what was withheld. */
export function JsonView({ value, depth = 0 }: { value: unknown; depth?: number }): ReactNode {
  const indent = '  '.repeat(depth + 1);
  const close = '  '.repeat(depth);
  if (value === null) return <span className={styles.jsonLiteral}>null</span>;
  if (typeof value === 'string') {
    if (value === REDACTED) return <span className={styles.redacted} title="The value was redacted before it was stored">redacted</span>;
    if (/…\[truncated: \d+ more characters\]$/.test(value)) {
      const cut = value.lastIndexOf('…[truncated');
      return (
        <span className={styles.jsonString}>
          {JSON.stringify(value.slice(0, cut))}
          <span className={styles.truncated}>{value.slice(cut)}</span>
        </span>
      );
    }
    return <span className={styles.jsonString}>{JSON.stringify(value)}</span>;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return <span className={styles.jsonLiteral}>{String(value)}</span>;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return (
      <>
        {'[\n'}
        {value.map((v, i) => (
          <span key={i}>
            {indent}
            <JsonView value={v} depth={depth + 1} />
            {i < value.length - 1 ? ',\n' : '\n'}
          </span>
        ))}
        {close}]
      </>
    );
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return '{}';
    return (
      <>
        {'{\n'}
        {entries.map(([k, v], i) => (
          <span key={k}>
            {indent}
            <span className={k === '[truncated]' ? styles.truncated : styles.jsonKey}>{JSON.stringify(k)}</span>: <JsonView value={v} depth={depth + 1} />
            {i < entries.length - 1 ? ',\n' : '\n'}
          </span>
        ))}
        {close}
        {'}'}
      </>
    );
  }
  return String(value);
}

function ArgumentsView({ json }: { json: string | null }) {
  if (json === null) return <p className="muted">No arguments were recorded (an HTTP request, or a call without arguments).</p>;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return <pre className={styles.json}>{json}</pre>;
  }
  const redacted = json.includes(`"${REDACTED}"`);
  return (
    <>
      <pre className={styles.json} data-testid="denial-arguments" tabIndex={0} aria-label="Arguments">
        <JsonView value={parsed} />
      </pre>
      {redacted ? <p className={styles.fieldNote}>Values marked “redacted” were removed before the denial was stored (secret-named keys).</p> : null}
    </>
  );
}

const DECISION_TEXT: Record<string, string> = { DENY: 'Deny', ALLOW: 'Allow', ASK: 'Ask' };

/**
 * Up/Down (or k/j) inside the open panel move to the previous/next denial of the list, as in a mail reader. Not while
 * typing in a field or with a modifier held (those keys belong to the browser or the field).
 */
export function stepKey(e: KeyboardEvent<HTMLElement>, onStep: (delta: 1 | -1) => void, canStep: { prev: boolean; next: boolean }): void {
  if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
  const t = e.target as HTMLElement;
  if (t.closest('input, textarea, select, [contenteditable="true"]')) return;
  const delta = e.key === 'ArrowDown' || e.key === 'j' ? 1 : e.key === 'ArrowUp' || e.key === 'k' ? -1 : 0;
  if (delta === 0) return;
  e.preventDefault();
  if (delta === 1 ? canStep.next : canStep.prev) onStep(delta);
}

/** The attributes of a detail panel that steps through its list (the denials' and the audit events' alike). */
export function stepping(onStep: ((delta: 1 | -1) => void) | undefined, canStep: { prev: boolean; next: boolean }) {
  return onStep
    ? { 'aria-keyshortcuts': 'ArrowDown ArrowUp J K', onKeyDown: (e: KeyboardEvent<HTMLElement>) => stepKey(e, onStep, canStep) }
    : {};
}

export function DetailPanel({ id, detail, error, loading, onClose, onFilter, onStep, canStep, onRetry }: Props) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    headingRef.current?.focus();
  }, [id]);
  const d = detail?.id === id ? detail : undefined;

  const copyLink = async () => {
    try {
      await navigator.clipboard.writeText(window.location.href);
      setCopied(true);
      setTimeout(() => setCopied(false), 2000);
    } catch {
      setCopied(false);
    }
  };

  // The deciding rule: the trace entry that carries the denial's own rule source and decided it.
  const decidingIndex = d?.trace ? d.trace.findIndex((r) => r.rule_source === d.rule_source && r.decision !== 'ALLOW') : -1;

  return (
    <aside
      className={styles.panel}
      role="dialog"
      aria-modal="false"
      aria-labelledby="denial-title"
      data-testid="denial-detail"
      {...stepping(onStep, canStep)}
    >
      <header className={styles.panelHead}>
        <h2 id="denial-title" ref={headingRef} tabIndex={-1}>
          Denial <span className={styles.mono}>#{id}</span>
        </h2>
        <div className={styles.panelNav}>
          {onStep ? (
            <>
              <button type="button" className="button button-quiet" disabled={!canStep.prev} onClick={() => onStep(-1)} aria-label="Previous denial in the list">
                ↑
              </button>
              <button type="button" className="button button-quiet" disabled={!canStep.next} onClick={() => onStep(1)} aria-label="Next denial in the list">
                ↓
              </button>
            </>
          ) : null}
          <button type="button" className="button button-quiet" onClick={onClose} aria-label="Close the details (Escape)">
            Close
          </button>
        </div>
      </header>
      <div className={styles.panelBody}>
        {error ? (
          <div className={styles.panelError} role="alert">
            <p>{error.status === 404 ? `There is no denial #${id}.` : `The denial could not be loaded: ${error.message}`}</p>
            {error.status !== 404 ? (
              <button type="button" className="button" onClick={onRetry}>
                Try again
              </button>
            ) : null}
          </div>
        ) : !d ? (
          <p className="muted" aria-busy={loading}>
            Loading the denial…
          </p>
        ) : (
          <>
            <p className={styles.panelLead}>
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
            <p className={styles.fieldNote}>
              The <b>{ruleSourceFamily(d.rule_source)}</b> family: {familyInfo(ruleSourceFamily(d.rule_source)).meaning}.
            </p>

            <dl className={styles.facts}>
              <dt>Local time</dt>
              <dd>
                <span className={styles.mono}>{localDateTime(d.timestamp)}</span> <span className="muted">({localZone(d.timestamp * 1000)})</span>
              </dd>
              <dt>UTC</dt>
              <dd className={styles.mono}>{utcDateTime(d.timestamp)}</dd>
              <dt>Agent</dt>
              <dd>{d.agent_name ?? <span className="muted">none</span>}</dd>
              <dt>Tool</dt>
              <dd>
                <code>{d.tool_name}</code>
              </dd>
              <dt>Rule source</dt>
              <dd className={styles.mono}>{d.rule_source}</dd>
              <dt>User role</dt>
              <dd>{d.user_role ?? <span className="muted">none</span>}</dd>
              <dt>Principal</dt>
              <dd>{d.principal ?? <span className="muted">none</span>}</dd>
              <dt>HTTP request</dt>
              <dd className={styles.mono}>{d.http_method ? `${d.http_method} ${d.http_path ?? ''}` : <span className="muted">none</span>}</dd>
              <dt>Tool call ID</dt>
              <dd className={styles.mono}>{d.tool_call_id ?? <span className="muted">none</span>}</dd>
              <dt>Decision ID</dt>
              <dd className={styles.mono} data-testid="denial-decision-id">{d.decision_id ?? <span className="muted">none</span>}</dd>
              <dt>Policy revision</dt>
              <dd className={styles.mono}>{d.policy_revision ?? <span className="muted">none</span>}</dd>
            </dl>

            <div className={styles.panelActions}>
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

            <h3 className={styles.panelSection}>Arguments</h3>
            <ArgumentsView json={d.arguments_json} />
            {d.masked_paths.length ? <p className={styles.fieldNote} data-testid="denial-masked">masked: {d.masked_paths.join(', ')}</p> : null}

            <h3 className={styles.panelSection}>How the decision was made</h3>
            {d.trace === null ? (
              <p className="muted">
                No trace was stored for this denial. Rejected and expired approvals are recorded when a person or the clock decides, not by a rule check.
              </p>
            ) : d.trace.length === 0 ? (
              <p className="muted">No rule matched: the call was denied by default (fail closed).</p>
            ) : (
              <>
                <p className={styles.fieldNote}>Every rule that matched, in the order the sources listed them. The highest priority decides; within it, Allow beats Deny beats Ask.</p>
                <ol className={styles.trace}>
                  {d.trace.map((r, i) => (
                    <li key={i} className={i === decidingIndex ? styles.deciding : undefined}>
                      <span className={`${styles.decision} ${styles[`decision${r.decision}`] ?? ''}`}>{DECISION_TEXT[r.decision] ?? r.decision}</span>
                      <span className={styles.traceMain}>
                        <span className={styles.mono}>{r.rule_source}</span>
                        <span className={styles.tracePriority}>priority {r.priority}</span>
                        {i === decidingIndex ? <span className={styles.decidedTag}>decided</span> : null}
                        <span className={styles.traceReason}>{r.reason}</span>
                      </span>
                    </li>
                  ))}
                </ol>
              </>
            )}
          </>
        )}
      </div>
    </aside>
  );
}
