import type { Metadata } from 'next';
import { flagHistoryQuerySchema, HISTORY_PAGE_SIZE } from '@/lib/flags/query';
import { transparencyReport } from '@/lib/flags/transparency';
import { requireSignedIn } from '@/lib/http/page-auth';
import Link from 'next/link';
import { canOpen } from '@/app/_components/page-roles';
import { Time } from '@/app/_components/time';
import { ComplianceProfiles } from './compliance-profiles';
import { FlagAdminProvider } from './flag-admin';
import { FlagHistory } from './flag-history';
import { FlagsTable } from './flags-table';
import { HooksList } from './hooks-list';
import { McpGateway } from './mcp-gateway';
import { SingleSignOn } from './single-sign-on';
import { withoutHostPaths } from './host-paths';
import { PrintButton } from './print-button';
import { RuleSources } from './rule-sources';
import styles from './transparency.module.css';

export const metadata: Metadata = { title: 'Transparency' };
export const dynamic = 'force-dynamic';

const PROBLEM_LABEL = { unknown_flag: 'Unknown flag', not_boolean: 'Not a boolean', invariant_refused: 'Refused: invariant', locked_refused: 'Refused: locked by a profile' } as const;

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export default async function TransparencyPage({ searchParams }: { searchParams: SearchParams }) {
  const { app, principal } = await requireSignedIn('/transparency');

  // The history filter comes from the URL, checked like the API checks it; a bad link shows why and the whole history.
  const sp = await searchParams;
  const parsed = flagHistoryQuerySchema.safeParse({ name: sp.name, by: sp.by, before: sp.before });
  const filter = parsed.success ? parsed.data : { limit: HISTORY_PAGE_SIZE };
  // Printed and shared: no absolute path of the server (host-paths.ts).
  const report = withoutHostPaths(await transparencyReport(app, filter));
  const admin = principal.role === 'admin';
  const { summary, problems } = report;
  const changeControl = app.changeControl.settings ? { settings: app.changeControl.settings, revision: app.changeControl.active?.revision } : undefined;
  const locked = report.tiers.reduce((n, t) => n + t.flags.filter((f) => f.locked_by !== null).length, 0);

  return (
    <div className={styles.page}>
      <div className={`page-head ${styles.head}`}>
        <div>
          <p className={styles.printOnly}>Swarm Permissions · transparency report</p>
          <h1>Transparency</h1>
          <p className="muted">Which features are on, which can never be turned off, what decides each permission, and who changed what.</p>
          <p className={styles.meta}>
            Report of <Time seconds={report.generated_at} />, viewed by <strong>{principal.id}</strong> ({principal.role}).
          </p>
        </div>
        <PrintButton />
      </div>

      <nav className={styles.toc} aria-label="On this page">
        <a href="#profiles">Compliance profiles</a>
        <a href="#flags">Flags</a>
        <a href="#problems">Configuration problems</a>
        <a href="#sources">Rule sources in force</a>
        <a href="#hooks">Hooks</a>
        <a href="#mcp">MCP gateway</a>
        <a href="#sso">Single sign-on</a>
        <a href="#history">Flag history</a>
      </nav>

      <p className={styles.summary} data-testid="flag-summary">
        {plural(summary.flags, 'flag')}: {summary.on} on, {summary.flags - summary.on} off · {plural(summary.overridden, 'runtime override')} ·{' '}
        {locked > 0 ? <>{locked} locked by a compliance profile ·{' '}</> : null}
        {plural(summary.problems, 'configuration problem')}
      </p>

      <section className={styles.section} aria-labelledby="profiles">
        <h2 id="profiles">Compliance profiles</h2>
        <ComplianceProfiles profiles={report.profiles} />
      </section>

      <section className={styles.section} aria-labelledby="flags">
        <h2 id="flags">Flags by tier</h2>
        <p className={styles.sectionLead}>
          Each value names the layer that decided it: a runtime override, then the environment variable, then a legacy alias,
          then the declared default. A flag locked by a compliance profile keeps the profile&apos;s value whatever the other layers say.
          {admin ? <span className={styles.screenOnly}> As an administrator you can override a flag or reset it; every change needs a reason. Invariants and locked flags cannot be changed here.</span> : null}
        </p>
        {admin ? (
          <FlagAdminProvider>
            <FlagsTable tiers={report.tiers} admin />
          </FlagAdminProvider>
        ) : (
          <FlagsTable tiers={report.tiers} admin={false} />
        )}
      </section>

      <section className={styles.section} aria-labelledby="problems">
        <h2 id="problems">Configuration problems</h2>
        {problems.length === 0 ? (
          <p className={`panel ${styles.quietPanel}`}>None: every flag variable in the server&apos;s environment was understood and applied.</p>
        ) : (
          <div className={`panel warning ${styles.problems}`}>
            <p>
              {plural(problems.length, 'setting was', 'settings were')} not applied. Fix them in the server&apos;s environment; they are also
              printed when the server starts.
            </p>
            <ul>
              {problems.map((p, i) => (
                <li key={i}>
                  <span className={styles.problemLabel}>{PROBLEM_LABEL[p.kind]}</span> {p.message}
                </li>
              ))}
            </ul>
          </div>
        )}
      </section>

      <section className={styles.section} aria-labelledby="sources">
        <h2 id="sources">Rule sources in force</h2>
        {changeControl ? (
          <p className={styles.sectionLead} data-testid="rules-under-change-control">
            <strong>Under change control</strong> (profile {changeControl.settings.profiles.join(', ')}): the rules below come from the active revision
            {changeControl.revision ? (
              <>
                {' '}
                <code title={changeControl.revision}>{changeControl.revision.slice(0, 12)}</code>
              </>
            ) : null}
            , changed only by an approved proposal{canOpen(principal.role, '/policy') ? <> (<Link href="/policy">Policy changes</Link>)</> : null}. A file edited on disk is shown as
            drift and not loaded.
          </p>
        ) : null}
        <RuleSources sources={report.sources} />
      </section>

      <section className={styles.section} aria-labelledby="hooks">
        <h2 id="hooks">Hooks</h2>
        <HooksList hooks={report.hooks} />
      </section>

      {report.mcp ? (
        <section className={styles.section} aria-labelledby="mcp">
          <h2 id="mcp">MCP gateway</h2>
          <McpGateway mcp={report.mcp} canAccept={principal.role === 'operator' || principal.role === 'admin'} />
        </section>
      ) : null}

      <section className={styles.section} aria-labelledby="sso">
        <h2 id="sso">Single sign-on</h2>
        <SingleSignOn config={app.ssoFile.current} status={app.ssoFile.status()} localLogin={app.sso.localLogin} byProfiles={app.profiles.breakGlassOnly?.profiles ?? []} />
      </section>

      <section className={styles.section} aria-labelledby="history">
        <h2 id="history">Flag history</h2>
        {parsed.success ? null : (
          <div className="panel warning" role="alert">
            The filter in the address is not valid, so the whole history is shown:{' '}
            {parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}
          </div>
        )}
        <FlagHistory history={report.history} paged={filter.before !== undefined} />
      </section>
    </div>
  );
}
