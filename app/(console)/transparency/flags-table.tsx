import { Fragment } from 'react';
import type { TransparencyFlag, TransparencyReport } from '@/lib/flags/transparency';
import { Time } from '@/app/_components/time';
import { FlagActions } from './flag-admin';
import { Ident } from './ident';
import { OnOff } from './on-off';
import styles from './transparency.module.css';

/** The layer that decided, as the table says it: "On, from override". */
const LAYER_LABEL = { override: 'override', env: 'environment', alias: 'alias', profile: 'profile lock', default: 'default' } as const;

function DecidedBy({ flag: f }: { flag: TransparencyFlag }) {
  // Who set an override or which profiles lock it. When and why are in the last change, which for an override in place
  // is always the one that set it.
  const by = f.layer === 'override' ? f.override?.set_by : f.layer === 'profile' ? f.locked_by?.join(', ') : undefined;
  return (
    <>
      <div className={styles.layer}>from {LAYER_LABEL[f.layer]}</div>
      {by ? (
        <div className={styles.detail}>
          by <strong>{by}</strong>
        </div>
      ) : null}
      {(f.layer === 'env' || f.layer === 'alias') && f.variable ? (
        <div className={styles.detail}>
          <Ident>{f.variable}</Ident>
        </div>
      ) : null}
    </>
  );
}

function Guards({ flag: f }: { flag: TransparencyFlag }) {
  const { tools, paths } = f.guards;
  if (tools.length === 0 && paths.length === 0) return <span className="muted">Platform behaviour</span>;
  const groups = [['Tool', tools], ['Path', paths]] as const;
  return (
    <dl className={styles.guards}>
      {groups.map(([noun, names]) =>
        names.length > 0 ? (
          <Fragment key={noun}>
            <dt>{names.length === 1 ? noun : `${noun}s`}</dt>
            {names.map((n) => (
              <dd key={n}>
                <Ident>{n}</Ident>
              </dd>
            ))}
          </Fragment>
        ) : null,
      )}
    </dl>
  );
}

/** The newest change of a flag, as a sentence: when, who did what, and why. */
function LastChange({ change }: { change: TransparencyFlag['last_change'] }) {
  if (!change) return <span className="muted">Never changed</span>;
  const to = change.new_value === null ? 'unknown' : change.new_value ? 'on' : 'off';
  const what =
    change.action === 'refused'
      ? `tried to ${change.new_value === null ? 'reset it' : `turn it ${to}`} (refused)`
      : change.action === 'unset' ? `reset it (now ${to})` : change.old_value === change.new_value ? `kept it ${to} by override` : `turned it ${to}`;
  return (
    <>
      <Time seconds={change.changed_at} />
      <div className={styles.changeLine}>
        <strong>{change.changed_by}</strong> {what}
      </div>
      <q className={styles.quote}>{change.reason}</q>
    </>
  );
}

/**
 * Why a flag has no buttons: an invariant, or a flag a compliance profile locks. No control is offered that could
 * only be refused.
 */
function Unchangeable({ flag: f }: { flag: TransparencyFlag }) {
  return (
    <p className={styles.lockNote}>
      <span aria-hidden="true" className={styles.lockMark}>
        ⊘
      </span>
      {f.locked_by ? `Locked ${f.value ? 'on' : 'off'} by profile ${f.locked_by.join(', ')}` : 'Invariant: cannot be turned off'}
    </p>
  );
}

/** Every flag in one table, one row group per tier. Admins get a column of controls. */
export function FlagsTable({ tiers, admin }: { tiers: TransparencyReport['tiers']; admin: boolean }) {
  const columns = admin ? 6 : 5;
  return (
    <div className={`table-wrap ${styles.wrap}`}>
      {/* On a phone each flag reads as a small card: its name first, its value and the administrator's buttons beside it. */}
      <table className={`table table-cards-when-narrow ${styles.flagsTable}`} aria-label="Feature flags by tier">
        <thead>
          <tr>
            <th scope="col" className={styles.colFlag}>
              Flag
            </th>
            <th scope="col" className={styles.colValue}>
              Value and layer
            </th>
            <th scope="col">What it does</th>
            <th scope="col" className={styles.colGuards}>
              Guards
            </th>
            <th scope="col" className={styles.colChange}>
              Last change
            </th>
            {admin ? (
              <th scope="col" className={styles.actionsCol}>
                Change
              </th>
            ) : null}
          </tr>
        </thead>
        {tiers.map((t) => (
          <tbody key={t.tier} className={styles.tierGroup} data-tier={t.tier}>
            <tr className={styles.tierRow}>
              <th scope="rowgroup" colSpan={columns} id={`tier-${t.tier}`}>
                <span className={styles.tierTitle}>
                  {t.title} <span className={styles.count}>({t.flags.length})</span>
                </span>
                <span className={styles.tierSummary}>{t.summary}</span>
              </th>
            </tr>
            {t.flags.map((f) => (
              <tr key={f.name} data-flag={f.name}>
                <td className={styles.flagCell} data-label="Flag">
                  <Ident className={styles.flagName}>{f.name}</Ident>
                  <div className={styles.owner}>
                    {f.tier === 'invariant' ? <span className={styles.invariantLabel}>Invariant</span> : null}
                    {f.tier === 'experiment' ? <span className={styles.experimentLabel}>Experiment</span> : null}
                    <span className="nowrap">Owner: {f.owner ?? 'unassigned'}</span>
                  </div>
                </td>
                <td className={styles.valueCell} data-label="Value">
                  <OnOff value={f.value} />
                  <DecidedBy flag={f} />
                  {f.default !== null && f.value !== f.default ? (
                    <div className={styles.detail}>declared default: {f.default ? 'on' : 'off'}</div>
                  ) : null}
                </td>
                <td className={styles.description} data-label="What it does">{f.description}</td>
                <td className={styles.guardsCell} data-label="Guards">
                  <Guards flag={f} />
                </td>
                <td className={styles.lastChange} data-label="Last change">
                  <LastChange change={f.last_change} />
                </td>
                {admin ? (
                  <td className={styles.actionsCol} data-label={`Change ${f.name}`}>
                    {f.changeable ? <FlagActions flag={f} /> : <Unchangeable flag={f} />}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        ))}
      </table>
    </div>
  );
}
