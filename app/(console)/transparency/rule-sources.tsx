import type { TransparencyReport } from '@/lib/flags/transparency';
import { durationWords } from '@/lib/config/duration-words';
import { DataTable } from '@/app/_components/data-table';
import { Time } from '@/app/_components/time';
import styles from './transparency.module.css';

type Sources = TransparencyReport['sources'];
type FileState = Sources['policy']['file'];

/** Where a configuration file stands: loaded when, or the error that kept the last good version in force. */
export function FileStatus({ file, what, missingMeans }: { file: FileState; what: string; missingMeans: string }) {
  return (
    <dl className={styles.fileStatus}>
      <dt>File</dt>
      <dd>
        <code>{file.path}</code>
      </dd>
      <dt>Status</dt>
      <dd>
        {file.error ? (
          <div className={styles.fileError} role="note" aria-label={`${what} error`}>
            <strong>Error: the last good version stays in force.</strong>
            <pre>{file.error}</pre>
          </div>
        ) : file.drift ? (
          <div className={styles.fileError} role="note" aria-label={`${what} drift`}>
            <strong>Differs from the active revision; not loaded.</strong> Under change control the rules in force are the active revision&apos;s: this file
            changes them only through an approved proposal.
          </div>
        ) : file.pinned ? (
          <span>
            <strong>From the active revision</strong> (change control); the file on disk is the same
          </span>
        ) : file.missing ? (
          <span>
            <strong>No file.</strong> {missingMeans}
          </span>
        ) : (
          <span>
            <strong>Loaded</strong> without errors
          </span>
        )}
      </dd>
      <dt>{file.error ? 'Last good version loaded' : 'Loaded'}</dt>
      <dd>{file.loaded_at === null ? <span className="muted">never</span> : <Time seconds={file.loaded_at} />}</dd>
    </dl>
  );
}

/** Names (tools, rules, gates) as a list of code, one a line. */
export function CodeList({ items, prefix = '' }: { items: readonly string[]; prefix?: string }) {
  return (
    <ul className={styles.toolList}>
      {items.map((t) => (
        <li key={t}>
          <code>{`${prefix}${t}`}</code>
        </li>
      ))}
    </ul>
  );
}

export function RuleSources({ sources }: { sources: Sources }) {
  const { registered, policy, agents, gates, tests } = sources;
  return (
    <>
      <p className={styles.sectionLead}>
        Every tool call and every HTTP request is decided by these sources together. The highest priority present decides; within
        one priority, ALLOW wins over DENY and DENY over ASK. With no rule at all, a tool call is denied.
      </p>
      <DataTable label="Registered rule sources" heads={['#', 'Source', 'What it does', 'Priority']} wrapClassName={styles.wrap}>
        {registered.length === 0 ? (
          <tr>
            <td colSpan={4}>No rule source is registered: every tool call is denied by default.</td>
          </tr>
        ) : (
          registered.map((s) => (
            <tr key={s.name}>
              <td>{s.order}</td>
              <td className="nowrap">
                <strong>{s.title}</strong>
                <div className={styles.detail}>
                  <code>{s.name}</code>
                  {s.built_in ? null : <span className={styles.experimentLabel}>Plugin</span>}
                </div>
              </td>
              <td className={styles.description}>{s.description}</td>
              <td>{s.priorities ?? <span className="muted">set by the plugin</span>}</td>
            </tr>
          ))
        )}
      </DataTable>

      <h3 className={styles.subhead} id="policy">
        YAML policy rules <span className={styles.count}>({policy.rules.length})</span>
      </h3>
      <FileStatus file={policy.file} what="Policy file" missingMeans="No operator rules are in force; the built-in sources decide alone." />
      {policy.rules.length === 0 ? (
        <p className={`panel ${styles.quietPanel}`}>The policy file has no rules: the built-in sources decide alone.</p>
      ) : (
        <DataTable label="YAML policy rules" heads={['Rule', 'From', 'Decision', 'Priority', 'Applies to', 'Matches when', 'Reason']} wrapClassName={styles.wrap}>
          {policy.rules.map((r) => (
            <tr key={r.id}>
              <td>
                <code>{r.rule_source}</code>
              </td>
              <td className="nowrap">
                {r.profile ? (
                  <>
                    profile <code>{r.profile}</code>
                  </>
                ) : (
                  'policy file'
                )}
              </td>
              <td>
                <span className={`${styles.decision} ${styles[`decision${r.decision}`] ?? ''}`}>{r.decision}</span>
              </td>
              <td>{r.priority}</td>
              <td>{r.applies_to}</td>
              <td>
                <ul className={styles.conditions}>
                  {r.conditions.map((c) => (
                    <li key={c}>{c}</li>
                  ))}
                </ul>
              </td>
              <td className={styles.description}>{r.reason ?? r.description ?? <span className="muted">none given</span>}</td>
            </tr>
          ))}
        </DataTable>
      )}

      <h3 className={styles.subhead} id="gates">
        Approval gates in force <span className={styles.count}>({gates.gates.length})</span>
      </h3>
      <FileStatus file={gates.file} what="Gates file" missingMeans="Only the gates declared in code are in force." />
      <DataTable label="Approval gates in force" heads={['Gate', 'Tools', 'Only when', 'Approvals', 'Expires after', 'Risk', 'Why']} wrapClassName={styles.wrap}>
        {gates.gates.map((g) => (
          <tr key={g.id}>
            <td>
              <code>{g.rule_source}</code>
              <div className="muted">declared in {g.declared_in}</div>
            </td>
            <td>
              {g.tools.length > 0 && <CodeList items={g.tools} />}
              {g.annotations && (
                <div>
                  {g.tools.length > 0 ? 'when annotated' : 'every MCP tool annotated'} <code>{g.annotations}</code>
                </div>
              )}
            </td>
            <td>{g.when ? <code>{g.when}</code> : <span className="muted">every call</span>}</td>
            <td className="nowrap">
              {g.approvals_required === 1 ? '1 person' : `${g.approvals_required} different people`}
              <div className="muted">{g.approver_roles.join(' or ')}</div>
            </td>
            <td className="nowrap">{durationWords(g.expires_in_seconds)}</td>
            <td className="nowrap">{g.risk} risk</td>
            <td className={styles.description}>{g.description ?? <span className="muted">none given</span>}</td>
          </tr>
        ))}
      </DataTable>

      <h3 className={styles.subhead} id="policy-tests">
        Policy tests <span className={styles.count}>({tests.reduce((n, t) => n + t.cases, 0)})</span>
      </h3>
      {tests.length === 0 ? (
        <p className={`panel ${styles.quietPanel}`}>No policy tests are written: a configuration change is checked for its format only.</p>
      ) : (
        tests.map((t) => (
          <FileStatus key={t.file.path} file={t.file} what={`Policy tests (${t.cases} cases)`} missingMeans="No tests." />
        ))
      )}

      <h3 className={styles.subhead} id="agents">
        Agents and their allowlists <span className={styles.count}>({agents.agents.length})</span>
      </h3>
      <FileStatus file={agents.file} what="Agents file" missingMeans="No agent is known, so every agent tool call is denied." />
      {agents.agents.length === 0 ? (
        <p className={`panel ${styles.quietPanel}`}>No agents are declared: every agent tool call is denied.</p>
      ) : (
        <DataTable label="Agents and their allowed tools" heads={['Agent', 'Owner', 'Purpose', 'Allowed tools']} wrapClassName={styles.wrap}>
          {agents.agents.map((a) => (
            <tr key={a.name}>
              <td>
                <code>{a.name}</code>
              </td>
              <td className="nowrap">{a.owner ?? <span className="muted">unassigned</span>}</td>
              <td className={styles.description}>{a.description ?? <span className="muted">none given</span>}</td>
              <td>{a.tools.length === 0 ? <span className="muted">none: every tool is denied</span> : <CodeList items={a.tools} />}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}

