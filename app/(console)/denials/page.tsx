import type { Metadata } from 'next';
import { requirePage } from '../../../lib/http/page-auth';
import { Forbidden } from '../../_components/forbidden';
import { RuleSourceBadge } from '../../_components/rule-source-badge';
import { Time } from '../../_components/time';

export const metadata: Metadata = { title: 'Denials' };
export const dynamic = 'force-dynamic';

export default async function DenialsPage() {
  const { app, denied } = await requirePage('/denials', 'auditor');
  if (denied) return <Forbidden {...denied} />;
  const { rows } = app.denials.query({ limit: 50 });
  const total = app.denials.count();
  return (
    <>
      <div className="page-head">
        <h1>Denials</h1>
        <p className="muted">
          Every blocked tool call and request, newest first, each attributed to the rule that caused it. {total.toLocaleString('en')} in all.
        </p>
      </div>
      {rows.length === 0 ? (
        <div className="panel empty">No denials have been recorded yet.</div>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="Latest denials">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Agent</th>
                <th scope="col">Tool</th>
                <th scope="col">Rule source</th>
                <th scope="col">Reason</th>
                <th scope="col">Role</th>
                <th scope="col">Request</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.id}>
                  <td className="nowrap">
                    <Time seconds={r.timestamp} />
                  </td>
                  <td>{r.agentName ?? '—'}</td>
                  <td>
                    <code>{r.toolName}</code>
                  </td>
                  <td>
                    <RuleSourceBadge ruleSource={r.ruleSource} />
                  </td>
                  <td className="reason">{r.reason}</td>
                  <td>{r.userRole ?? '—'}</td>
                  <td className="nowrap">{r.httpMethod ? `${r.httpMethod} ${r.httpPath}` : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
