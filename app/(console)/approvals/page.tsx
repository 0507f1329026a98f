import type { Metadata } from 'next';
import { requirePage } from '../../../lib/http/page-auth';
import { Forbidden } from '../../_components/forbidden';
import { ago } from '../../_components/time';

export const metadata: Metadata = { title: 'Approvals' };
export const dynamic = 'force-dynamic';

export default async function ApprovalsPage() {
  const { app, denied } = await requirePage('/approvals', 'auditor');
  if (denied) return <Forbidden {...denied} />;
  const pending = app.approvals.list({ status: 'pending' });
  const now = Date.now() / 1000;
  return (
    <>
      <div className="page-head">
        <h1>Approvals</h1>
        <p className="muted">Gated tool calls waiting for an operator, oldest first.</p>
      </div>
      {pending.length === 0 ? (
        <div className="panel empty">Nothing is waiting for approval.</div>
      ) : (
        <div className="table-wrap">
          <table className="table" aria-label="Pending approvals">
            <thead>
              <tr>
                <th scope="col">Gate</th>
                <th scope="col">Agent</th>
                <th scope="col">Tool</th>
                <th scope="col">Arguments</th>
                <th scope="col">Requested by</th>
                <th scope="col">Waiting</th>
                <th scope="col">Expires in</th>
              </tr>
            </thead>
            <tbody>
              {pending.map((a) => (
                <tr key={a.id}>
                  <td>
                    <span className="badge badge-hitl">{a.gate}</span>
                  </td>
                  <td>{a.agentName}</td>
                  <td>
                    <code>{a.toolName}</code>
                  </td>
                  <td>
                    <pre className="args">{JSON.stringify(JSON.parse(a.argumentsRedacted), null, 2)}</pre>
                  </td>
                  <td>{a.requestedBy}</td>
                  <td className="nowrap">{ago(a.requestedAt, now)}</td>
                  <td className="nowrap">{ago(now - (a.expiresAt - now), now)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
