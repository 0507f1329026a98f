import type { DenialDetail } from '@/lib/http/responses';
import kit from '@/app/(console)/_explorer/explorer.module.css';
import { localDateTime, localZone, utcDateTime } from '@/app/(console)/_explorer/format';

const none = <span className="muted">none</span>;

/** Everything recorded about a denial, field by field, with its time in the reader's zone and in UTC. */
export function DenialFacts({ denial: d }: { denial: DenialDetail }) {
  return (
    <dl className={kit.facts}>
      <dt>Local time</dt>
      <dd>
        <span className={kit.mono}>{localDateTime(d.timestamp)}</span> <span className="muted">({localZone(d.timestamp * 1000)})</span>
      </dd>
      <dt>UTC</dt>
      <dd className={kit.mono}>{utcDateTime(d.timestamp)}</dd>
      <dt>Agent</dt>
      <dd>{d.agent_name ?? none}</dd>
      <dt>Tool</dt>
      <dd>
        <code>{d.tool_name}</code>
      </dd>
      <dt>Rule source</dt>
      <dd className={kit.mono}>{d.rule_source}</dd>
      <dt>User role</dt>
      <dd>{d.user_role ?? none}</dd>
      <dt>Principal</dt>
      <dd>{d.principal ?? none}</dd>
      <dt>HTTP request</dt>
      <dd className={kit.mono}>{d.http_method ? `${d.http_method} ${d.http_path ?? ''}` : none}</dd>
      <dt>Tool call ID</dt>
      <dd className={kit.mono}>{d.tool_call_id ?? none}</dd>
      <dt>Decision ID</dt>
      <dd className={kit.mono} data-testid="denial-decision-id">
        {d.decision_id ?? none}
      </dd>
      <dt>Policy revision</dt>
      <dd className={kit.mono}>{d.policy_revision ?? none}</dd>
    </dl>
  );
}
