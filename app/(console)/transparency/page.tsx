import type { Metadata } from 'next';
import { FLAG_TIERS } from '../../../lib/flags/catalog';
import { flagToJson } from '../../../lib/flags/view';
import { requirePage } from '../../../lib/http/page-auth';
import { Forbidden } from '../../_components/forbidden';

export const metadata: Metadata = { title: 'Transparency' };
export const dynamic = 'force-dynamic';

const TIER_TITLE = { invariant: 'Invariants: can never be turned off', flag: 'Flags: production features', experiment: 'Experiments: opt-in, may change' };

export default async function TransparencyPage() {
  const { app, denied } = await requirePage('/transparency', 'viewer');
  if (denied) return <Forbidden {...denied} />;
  const resolution = app.flags.resolution();
  const flags = [...resolution.flags.values()].map(flagToJson);
  return (
    <>
      <div className="page-head">
        <h1>Transparency</h1>
        <p className="muted">Which features are on, which can never be turned off, and where each value comes from.</p>
      </div>
      {resolution.problems.length > 0 ? (
        <div className="panel warning" role="status">
          <h2>Configuration problems</h2>
          <ul>
            {resolution.problems.map((p, i) => (
              <li key={i}>{p.message}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {FLAG_TIERS.map((tier) => (
        <section key={tier} className="section">
          <h2>{TIER_TITLE[tier]}</h2>
          <div className="table-wrap">
            <table className="table" aria-label={`${tier} flags`}>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Value</th>
                  <th scope="col">Decided by</th>
                  <th scope="col">Description</th>
                  <th scope="col">Guards</th>
                </tr>
              </thead>
              <tbody>
                {flags
                  .filter((f) => f.tier === tier)
                  .map((f) => (
                    <tr key={f.name}>
                      <td>
                        <code>{f.name}</code>
                        {f.tier === 'invariant' ? <span className="badge badge-invariant">invariant</span> : null}
                      </td>
                      <td>
                        <span className={f.value ? 'state state-on' : 'state state-off'}>{f.value ? 'On' : 'Off'}</span>
                      </td>
                      <td>
                        {f.layer}
                        {f.variable ? <span className="muted"> ({f.variable})</span> : null}
                        {f.override ? <span className="muted"> by {f.override.set_by}</span> : null}
                      </td>
                      <td className="reason">{f.description}</td>
                      <td>{[...f.guards.tools, ...f.guards.paths].join(', ') || '—'}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </div>
        </section>
      ))}
    </>
  );
}
