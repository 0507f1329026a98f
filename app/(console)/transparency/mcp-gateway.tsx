import type { ReactNode } from 'react';
import type { McpTransparency } from '@/lib/mcp/transparency';
import { durationWords } from '@/lib/config/duration-words';
import { Time } from '@/app/_components/time';
import { AcceptDefinition, PinAcceptanceStatus } from '../_mcp/accept-definition';
import { FileDiff } from '../policy/diff-view';
import { FileStatus } from './rule-sources';
import styles from './transparency.module.css';

type Server = McpTransparency['servers'][number];
type Held = McpTransparency['pins']['held'][number];
type Visibility = McpTransparency['agents'][number]['visibility'][number];

/** A server's state in words with a mark; the mark only repeats the words (never colour alone). */
const STATE: Record<Server['state'], { mark: string; text: string }> = {
  connected: { mark: '●', text: 'Connected' },
  starting: { mark: '◌', text: 'Starting' },
  restarting: { mark: '↻', text: 'Restarting' },
  stopped: { mark: '■', text: 'Stopped' },
};

/** What tools/list gives an agent for a tool today (lib/mcp/visibility.ts). */
const SHOWN: Record<Visibility, { mark: string; text: string }> = {
  open: { mark: '✓', text: 'allowed' },
  gated: { mark: '◐', text: 'needs approval' },
  hidden: { mark: '—', text: 'hidden' },
};

const ON_ASK: Record<Server['on_ask'], string> = {
  wait: 'held until a person decides',
  return: 'answered at once; retried after approval',
};

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * The MCP gateway on /transparency: its file, the servers it puts behind the engine with their state, and what each
 * agent's tools/list holds today. Wide tables scroll inside a focusable region, so a keyboard can scroll them too.
 */
export function McpGateway({ mcp, canAccept }: { mcp: McpTransparency; canAccept: boolean }) {
  const file = mcp.file;
  if (mcp.servers.length === 0 && !file.error) {
    return (
      <>
        <p className={`panel ${styles.quietPanel}`} data-testid="mcp-none">
          No MCP server is configured. To put MCP servers behind the engine, add <code>config/mcp.yaml</code> with their command or URL
          (see <a href="/docs/mcp-gateway">the MCP gateway documentation</a>); agents then reach them at <code>/mcp</code> or through <code>npx swarm mcp serve</code>.
        </p>
        {/* Gateways that decide over REST report their own upstreams: what they hold is reviewed here too. */}
        {mcp.pins.held.length > 0 || mcp.pins.pins.length > 0 ? <ToolPins mcp={mcp} canAccept={canAccept} /> : null}
      </>
    );
  }
  return (
    <>
      <p className={styles.sectionLead}>
        Agents reach these servers through the gateway (<code>/mcp</code>, or <code>npx swarm mcp serve</code>). Every call is decided by
        the engine before the server sees it, and each agent is shown only the tools it may use.
      </p>
      <FileStatus file={file} what="MCP configuration" missingMeans="No MCP server is configured." />
      <dl className={styles.fileStatus} aria-label="How the gateway names and holds calls">
        <dt>Tool names</dt>
        <dd>
          server, then <code>{mcp.separator}</code>, then the server&apos;s own tool: <code>{`files${mcp.separator}write_file`}</code>
        </dd>
        <dt>Approval wait</dt>
        <dd>a call that needs approval is held for up to {durationWords(mcp.approval_wait_seconds)}, then refused</dd>
      </dl>

      <h3 className={styles.subhead} id="mcp-servers">
        Servers <span className={styles.count}>({mcp.servers.length})</span>
      </h3>
      <ScrollTable id="mcp-servers-table" caption="MCP servers and their state" heads={['Server', 'Transport', 'What runs', 'Variables it is given', 'When a call needs approval', 'State', 'Tools']}>
        {mcp.servers.map((s) => (
          <tr key={s.id} data-mcp-server={s.id}>
            <th scope="row" className={`${styles.rowHead} ${styles.mcpServerCell}`}>
              <code>{s.id}</code>
              {s.description ? <div className={styles.detail}>{s.description}</div> : null}
              <div className={styles.detail}>declared at {s.position}</div>
            </th>
            <td className="nowrap">{s.transport === 'stdio' ? 'stdio (a command)' : 'Streamable HTTP'}</td>
            <td className={styles.mcpShown}>
              <code>{s.shown}</code>
            </td>
            <td>
              {s.env_from.length === 0 ? (
                <span className="muted">none</span>
              ) : (
                <ul className={styles.toolList} aria-label="Variable names (values are never shown)">
                  {s.env_from.map((v) => (
                    <li key={v}>
                      <code>{v}</code>
                    </li>
                  ))}
                </ul>
              )}
            </td>
            <td>
              <code>{s.on_ask}</code>: {ON_ASK[s.on_ask]}
            </td>
            <td className={styles.mcpStateCell}>
              <ServerState s={s} />
            </td>
            <td>{s.state === 'connected' || s.tools > 0 ? s.tools : <span className="muted">none yet</span>}</td>
          </tr>
        ))}
      </ScrollTable>

      <h3 className={styles.subhead} id="mcp-matrix">
        What each agent is shown <span className={styles.count}>({plural(mcp.tools.length, 'tool')})</span>
      </h3>
      <p className={styles.sectionLead}>
        The decision each agent gets today for each tool, as its <code>tools/list</code> shows it: <strong>allowed</strong>,{' '}
        <strong>needs approval</strong> (listed, and its description says a person must approve), or <strong>hidden</strong> (a tool
        it can never use is not listed). A call with particular arguments may still be decided otherwise.
      </p>
      {mcp.tools.length === 0 ? (
        <p className={`panel ${styles.quietPanel}`}>No tools yet: no server is connected.</p>
      ) : mcp.agents.length === 0 ? (
        <p className={`panel ${styles.quietPanel}`}>No agents are declared, so no agent is shown any tool.</p>
      ) : (
        <Matrix mcp={mcp} />
      )}

      <ToolPins mcp={mcp} canAccept={canAccept} />
    </>
  );
}

/**
 * The definitions of the upstream tools as reviewed (lib/mcp/pins): each held one (changed since it was reviewed, or
 * new under a profile that holds new tools) with the difference, line by line, and for an operator the way to accept
 * it; then how many are pinned and how.
 */
function ToolPins({ mcp, canAccept }: { mcp: McpTransparency; canAccept: boolean }) {
  const { held, pins, change_control: changeControl, hold_new_tools: holders } = mcp.pins;
  const firstSight = pins.filter((p) => p.accepted_via === 'first_use').length;
  return (
    <>
      <h3 className={styles.subhead} id="mcp-held">
        Tool definitions held for review <span className={styles.count}>({held.length})</span>
      </h3>
      <p className={styles.sectionLead}>
        Each tool&apos;s definition (its name, description, input and output schema and annotations) is pinned as it was reviewed
        {holders.length > 0 ? <> (profile {holders.join(', ')} holds every new tool for review)</> : <>, at first sight</>}. A tool whose
        definition changes is not shown to any agent and its calls are refused (recorded as <code>mcp_pin</code>) until an operator
        accepts the new definition{changeControl ? <>; with change control on, accepting makes a proposal, approved like any change to the rules</> : null}. Also:{' '}
        <code>npx swarm mcp pins</code>.
      </p>
      <PinAcceptanceStatus>
        {held.length === 0 ? (
          <p className={`panel ${styles.quietPanel}`} data-testid="mcp-none-held">
            Nothing is held: every tool the gateway saw is listed as it was reviewed.
          </p>
        ) : (
          <ul className={styles.heldList} aria-label="Tool definitions held for review">
            {held.map((h) => (
              <HeldDefinition key={`${h.server}/${h.tool}/${h.sha256}`} h={h} separator={mcp.separator} canAccept={canAccept} changeControl={changeControl} />
            ))}
          </ul>
        )}
      </PinAcceptanceStatus>
      <p className={styles.detail} data-testid="mcp-pins-count">
        {plural(pins.length, 'tool definition')} pinned: {firstSight} at first sight, {pins.length - firstSight} accepted by a person.
      </p>
    </>
  );
}

function HeldDefinition({ h, separator, canAccept, changeControl }: { h: Held; separator: string; canAccept: boolean; changeControl: boolean }) {
  const listed = `${h.server}${separator}${h.tool}`;
  return (
    <li className={`panel ${styles.held}`} data-mcp-held={listed}>
      <h4 className={styles.heldTitle}>
        <code>{listed}</code>
        <span className={styles.heldWhy}>{h.pinned_sha256 ? 'changed since it was reviewed' : 'new, not reviewed yet'}</span>
      </h4>
      <p className={styles.heldMeta}>
        Seen <Time seconds={h.seen_at} />
        {h.pinned_sha256 ? (
          <>
            {' '}
            · reviewed <code title={h.pinned_sha256}>{h.pinned_sha256.slice(0, 12)}…</code>, now <code title={h.sha256}>{h.sha256.slice(0, 12)}…</code>
          </>
        ) : (
          <>
            {' '}
            · <code title={h.sha256}>{h.sha256.slice(0, 12)}…</code>
          </>
        )}
        {h.listed_now === false ? ' · the server no longer lists this definition' : null}
        {h.proposal ? (
          <>
            {' '}
            · proposed in <a href={`/policy/${h.proposal}`}>{h.proposal}</a>
          </>
        ) : null}
      </p>
      <FileDiff name={`${listed} (definition)`} before={h.pinned_definition} after={h.definition} />
      {canAccept && !h.proposal ? (
        <AcceptDefinition held={{ server: h.server, tool: h.tool, listed, sha256: h.sha256, pinnedSha256: h.pinned_sha256 }} changeControl={changeControl} />
      ) : !canAccept ? (
        <p className={styles.detail}>An operator or an administrator can accept it.</p>
      ) : null}
    </li>
  );
}

function ServerState({ s }: { s: Server }) {
  const st = STATE[s.state];
  return (
    <>
      <span className={`${styles.mcpState} ${styles[`mcpState_${s.state}`] ?? ''}`} data-state={s.state}>
        <span aria-hidden="true" className={styles.mark}>
          {st.mark}
        </span>
        {st.text}
      </span>
      {s.restarts > 0 ? <div className={styles.detail}>{plural(s.restarts, 'restart')}</div> : null}
      {s.last_error ? (
        <div className={styles.refusal}>
          Last error (<Time seconds={s.last_error.at / 1000} />): {s.last_error.message}
        </div>
      ) : null}
    </>
  );
}

/** Tools down, agents across, grouped by server. */
function Matrix({ mcp }: { mcp: McpTransparency }) {
  const servers = [...new Set(mcp.tools.map((t) => t.server))];
  const columns = mcp.agents.length + 1;
  return (
    <ScrollTable id="mcp-matrix-table" caption="What tools/list gives each agent, per MCP tool" heads={['Tool', ...mcp.agents.map((a) => a.agent)]} className={styles.mcpMatrix}>
      {servers.map((server) => {
        const tools = mcp.tools.map((t, i) => ({ ...t, i })).filter((t) => t.server === server);
        return [
          <tr key={`server-${server}`} className={styles.tierRow}>
            <th scope="colgroup" colSpan={columns}>
              <span className={styles.tierTitle}>
                server <code>{server}</code>
              </span>{' '}
              <span className={styles.tierSummary}>
                {plural(tools.length, 'tool')}, listed as <code>{`${server}${mcp.separator}`}</code>&lt;tool&gt;
              </span>
            </th>
          </tr>,
          ...tools.map((t) => (
            <tr key={t.name} data-mcp-tool={t.name}>
              <th scope="row" className={`${styles.rowHead} ${styles.mcpToolCell}`} title={t.name}>
                {/* the server is the group's header: the upstream's own name is shown, the full name is read aloud */}
                <code>
                  <span className="visually-hidden">{`${server}${mcp.separator}`}</span>
                  {t.name.slice(server.length + mcp.separator.length)}
                </code>
                {t.destructive ? <span className={styles.destructiveLabel}>destructive</span> : t.read_only ? <span className={styles.readOnlyLabel}>read-only</span> : null}
              </th>
              {mcp.agents.map((a) => {
                const v = a.visibility[t.i] ?? 'hidden';
                return (
                  <td key={a.agent} className={`${styles.shown} ${styles[`shown_${v}`] ?? ''}`} data-visibility={v}>
                    <span aria-hidden="true" className={styles.mark}>
                      {SHOWN[v].mark}
                    </span>
                    {SHOWN[v].text}
                  </td>
                );
              })}
            </tr>
          )),
        ];
      })}
    </ScrollTable>
  );
}

/**
 * A wide table in a scrolling region a keyboard can reach (Tab, then the arrow keys), named by its visible caption.
 */
function ScrollTable({ id, caption, heads, className, children }: { id: string; caption: string; heads: readonly string[]; className?: string; children: ReactNode }) {
  return (
    <div className={`table-wrap ${styles.wrap}`} role="region" aria-labelledby={`${id}-caption`} tabIndex={0}>
      <table className={className ? `table ${className}` : 'table'} id={id}>
        <caption id={`${id}-caption`} className={styles.caption}>
          {caption}
        </caption>
        <thead>
          <tr>
            {heads.map((h) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
