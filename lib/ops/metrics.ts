/**
 * Prometheus metrics (prom-client). Each process (the decision listener and the Next.js server) counts its own
 * decisions in a registry of its own; the listener serves `GET /metrics` with both merged (the Next.js server hands
 * its registry over on a loopback-only internal route, see lib/ops/internal.ts) and with the state read from the
 * database at scrape time (pending approvals, the audit chain heads, the WAL).
 */
import { sql } from 'drizzle-orm';
import { AggregatorRegistry, Counter, Gauge, Registry, type MetricObjectWithValues, type MetricType, type MetricValue } from 'prom-client';
import type { Recorded, Recorder, AuditEvent } from '@/lib/permissions/recorder';
import type { CheckResult } from '@/lib/permissions';
import type { SqlDatabase } from '@/db/dialect';
import { ruleSourceFamily } from '@/lib/audit/denials/vocabulary';

export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

interface ProcessMetrics {
  registry: Registry;
  decisions: TalliedCounter;
  decisionSeconds: TalliedHistogram;
  denialWriteSeconds: TalliedHistogram;
  reloadFailures: Counter;
  hookRuns: Counter<'hook' | 'event' | 'outcome'>;
}

/**
 * The most label sets one tallied metric keeps. Every label of these metrics is a word of the code (kind, decision,
 * the family of a rule source, never an agent or tool name from a request), so a few dozen are in use; should a source
 * ever name itself from input, the sets past this bound are counted together under OVERFLOW_LABEL instead of one
 * series each. A cap, not eviction: a counter that forgot a series would go backwards in Prometheus.
 */
export const MAX_LABEL_SETS = 256;
/** The value of every label of the series that counts what came past MAX_LABEL_SETS. */
export const OVERFLOW_LABEL = '_other';

/**
 * A counter of the decision path, counted in plain numbers and handed to prom-client when a scrape reads it.
 * prom-client's own inc() builds and validates a label object and its key on every call: with the histogram below,
 * about 4% of the decision listener's time per request.
 */
export class TalliedCounter {
  private readonly tallies = new Map<string, { labels: Record<string, string>; n: number }>();
  private readonly overflowKey: string;

  constructor(registry: Registry, name: string, help: string, private readonly labelNames: readonly string[]) {
    this.overflowKey = labelNames.map(() => OVERFLOW_LABEL).join('\u0000');
    const tallies = this.tallies;
    new Counter({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        for (const { labels, n } of tallies.values()) this.inc(labels, n);
      },
    });
  }

  /** one more, for these label values in the order of the label names */
  inc(...values: string[]): void {
    let key = values.join('\u0000');
    let tally = this.tallies.get(key);
    if (tally) {
      tally.n++;
      return;
    }
    if (this.tallies.size >= MAX_LABEL_SETS - 1) {
      // one set stays free for the overflow series
      key = this.overflowKey;
      values = this.labelNames.map(() => OVERFLOW_LABEL);
      tally = this.tallies.get(key);
      if (tally) {
        tally.n++;
        return;
      }
    }
    this.tallies.set(key, { labels: Object.fromEntries(this.labelNames.map((l, i) => [l, values[i]!])), n: 1 });
  }

  /** label sets counted (at most MAX_LABEL_SETS) */
  get labelSets(): number {
    return this.tallies.size;
  }
}

interface HistogramTally {
  /** observations in each bucket (not cumulative); the last one is +Inf */
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * A histogram of the decision path with at most one label, kept in plain numbers and reported in prom-client's form
 * (registered as a metric of the registry: the scrape, the merge across processes and the text are prom-client's).
 */
export class TalliedHistogram {
  // prom-client's types declare a numeric enum; its registry writes this string into the text format
  readonly type = 'histogram' as unknown as MetricType;
  readonly aggregator = 'sum' as const;
  readonly collect = () => {};
  private readonly tallies = new Map<string, HistogramTally>();

  constructor(
    registry: Registry,
    readonly name: string,
    readonly help: string,
    private readonly label: string | undefined,
    private readonly bounds: readonly number[],
  ) {
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  observe(seconds: number, labelValue = ''): void {
    let tally = this.tallies.get(labelValue);
    if (!tally) {
      // past the bound, with one set free for it: the overflow series (see MAX_LABEL_SETS)
      if (this.tallies.size >= MAX_LABEL_SETS - 1) labelValue = OVERFLOW_LABEL;
      tally = this.tallies.get(labelValue);
      if (!tally) this.tallies.set(labelValue, (tally = { buckets: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 }));
    }
    let b = 0;
    while (b < this.bounds.length && seconds > this.bounds[b]!) b++;
    tally.buckets[b]!++;
    tally.sum += seconds;
    tally.count++;
  }

  /** prom-client's metric interface: the values as its Histogram reports them */
  get(): MetricObjectWithValues<MetricValue<string>> {
    const values: MetricValue<string>[] = [];
    for (const [labelValue, tally] of this.tallies) {
      const labels: Record<string, string | number> = this.label ? { [this.label]: labelValue } : {};
      let cumulative = 0;
      tally.buckets.forEach((n, i) => {
        cumulative += n;
        values.push({ value: cumulative, metricName: `${this.name}_bucket`, labels: { le: i < this.bounds.length ? this.bounds[i]! : '+Inf', ...labels } } as MetricValue<string>);
      });
      values.push({ value: tally.sum, metricName: `${this.name}_sum`, labels } as MetricValue<string>);
      values.push({ value: tally.count, metricName: `${this.name}_count`, labels } as MetricValue<string>);
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator, collect: this.collect };
  }

  reset(): void {
    this.tallies.clear();
  }

  /** label values observed (at most MAX_LABEL_SETS) */
  get labelSets(): number {
    return this.tallies.size;
  }
}

const KEY = Symbol.for('swarm-permissions.metrics');
type GlobalWithMetrics = typeof globalThis & { [KEY]?: ProcessMetrics };

/** This process's registry (one per process, also across Next.js module copies). */
export function processMetrics(): ProcessMetrics {
  const g = globalThis as GlobalWithMetrics;
  if (g[KEY]) return g[KEY];
  const registry = new Registry();
  const m: ProcessMetrics = {
    registry,
    decisions: new TalliedCounter(
      registry,
      'swarm_decisions_total',
      'Decisions of the engine (decide: recorded checks, enforcements, HTTP route checks) by kind, decision and rule-source family.',
      ['kind', 'decision', 'source_family'],
    ),
    decisionSeconds: new TalliedHistogram(registry, 'swarm_decision_duration_seconds', 'Time the engine took to decide and record one decision.', 'kind', [
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1,
    ]),
    denialWriteSeconds: new TalliedHistogram(
      registry,
      'swarm_denial_write_duration_seconds',
      'Time to write one denial to the audit trail (permission_denials) before the decision is returned.',
      undefined,
      [0.00002, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1],
    ),
    reloadFailures: new Counter({
      name: 'swarm_config_reload_failures_total',
      help: 'Configuration file versions refused (malformed, or their policy tests failed); the last good version stayed in force.',
      // Both processes watch the same files and refuse the same versions: the merge takes the larger count.
      aggregator: 'max',
      registers: [registry],
    }),
    // Labels from configuration and code only: the hook's id (hooks.yaml, registerHook), the event and the outcome.
    hookRuns: new Counter({
      name: 'swarm_hook_runs_total',
      help: 'Lifecycle hooks run (config/hooks.yaml, registered TypeScript hooks) by hook, event and outcome (passed, rewrote, blocked, skipped, failed, delivered).',
      labelNames: ['hook', 'event', 'outcome'] as const,
      registers: [registry],
    }),
  };
  g[KEY] = m;
  return m;
}

export function observeDecision(kind: string, result: CheckResult, seconds: number): void {
  const m = processMetrics();
  m.decisions.inc(kind, result.decision, ruleSourceFamily(result.ruleSource));
  m.decisionSeconds.observe(seconds, kind);
}

/** A denial of a decision: the writes the denial-write histogram times. */
function isDenial(event: AuditEvent): boolean {
  return (event.kind === 'tool' || event.kind === 'http') && event.result.decision === 'DENY';
}

function observeDenialWrite(started: number): void {
  processMetrics().denialWriteSeconds.observe((performance.now() - started) / 1000);
}

/** The recorder the engine writes through, timing every denial it writes: over a recorder that writes at once (SQLite). */
export function timedRecorder(inner: { record(event: AuditEvent): Recorded | undefined }): Recorder {
  return {
    record(event: AuditEvent) {
      if (!isDenial(event)) return inner.record(event);
      const started = performance.now();
      const out = inner.record(event);
      observeDenialWrite(started);
      return out;
    },
  };
}

/** The same over a recorder that answers with a promise (PostgreSQL): timed until it resolves. */
export function timedAsyncRecorder(inner: { record(event: AuditEvent): Promise<Recorded | undefined> }): Recorder {
  return {
    record(event: AuditEvent) {
      if (!isDenial(event)) return inner.record(event);
      const started = performance.now();
      return inner.record(event).finally(() => observeDenialWrite(started));
    },
  };
}

const CHAINS = ['permission_denials', 'security_events'] as const;

/**
 * What the state gauges read (the application gives it): the database, the size of SQLite's write-ahead log (null on
 * PostgreSQL) and the status of the configuration files.
 */
export interface StateSource {
  readonly database: Pick<SqlDatabase, 'one'>;
  walBytes(): number | null;
  configStatus(): readonly { error: string | null }[];
}

/** What the state gauges read, from either database: pending approvals, and each audit chain's head and checkpoint. */
async function stateFacts(app: StateSource) {
  const db = app.database;
  const chainFacts = async (chain: (typeof CHAINS)[number]) => {
    const [head, cp] = await Promise.all([
      db.one<{ id: number; timestamp: number }>(sql`SELECT id, timestamp FROM ${sql.identifier(chain)} ORDER BY id DESC LIMIT 1`),
      db.one<{ size: number; created_at: number }>(sql`SELECT size, created_at FROM audit_checkpoints WHERE chain = ${chain} ORDER BY size DESC LIMIT 1`),
    ]);
    return { chain, head, cp };
  };
  const [pending, chains] = await Promise.all([
    db.one<{ n: number; oldest: number | null }>(sql`SELECT count(*) AS n, min(requested_at) AS oldest FROM approvals WHERE status = 'pending'`),
    Promise.all(CHAINS.map(chainFacts)),
  ]);
  return { pending: pending!, chains, walBytes: app.walBytes() };
}

/** The state of the installation, read from the database at scrape time (not counted per process). */
export async function stateRegistry(app: StateSource, now = Date.now() / 1000): Promise<Registry> {
  const registry = new Registry();
  const gauge = (name: string, help: string, labelNames: string[] = []) => new Gauge({ name, help, labelNames, registers: [registry] });
  const refused = gauge('swarm_config_files_refused', 'Configuration files whose newest version is refused (the last good version is in force).');
  refused.set(app.configStatus().filter((s) => s.error !== null).length);
  const up = gauge('swarm_database_up', '1 when the database answered the state queries of this scrape, 0 when it did not (an outage).');
  let facts: Awaited<ReturnType<typeof stateFacts>>;
  try {
    facts = await stateFacts(app);
  } catch (error) {
    // The database is gone: the scrape still answers (every counter of the processes, this gauge at 0), so that an
    // outage shows in the monitoring instead of making it blind.
    console.error('Reading the state gauges failed; /metrics answers without them.', error instanceof Error ? error.message : error);
    up.set(0);
    return registry;
  }
  up.set(1);
  gauge('swarm_approvals_pending', 'Approval requests waiting for a person.').set(Number(facts.pending.n));
  gauge('swarm_approvals_oldest_pending_age_seconds', 'How long the oldest pending approval request has waited (0 when none).').set(
    facts.pending.oldest === null ? 0 : Math.max(0, now - facts.pending.oldest),
  );
  const headAge = gauge('swarm_audit_chain_head_age_seconds', 'Age of the newest row of each audit chain.', ['chain']);
  const checkpointAge = gauge('swarm_audit_checkpoint_age_seconds', 'Age of the newest signed checkpoint of each audit chain (-1 when there is none).', ['chain']);
  const behind = gauge('swarm_audit_rows_unsigned', 'Rows of each audit chain written after its newest signed checkpoint.', ['chain']);
  for (const { chain, head, cp } of facts.chains) {
    headAge.set({ chain }, head ? Math.max(0, now - head.timestamp) : 0);
    checkpointAge.set({ chain }, cp ? Math.max(0, now - cp.created_at) : -1);
    behind.set({ chain }, Math.max(0, (head?.id ?? 0) - (cp?.size ?? 0)));
  }
  if (facts.walBytes !== null) gauge('swarm_wal_size_bytes', 'Size of the SQLite write-ahead log.').set(facts.walBytes);
  return registry;
}

/** Merge registries (as JSON) into one: counters and histograms summed, each metric's own aggregator otherwise. */
export async function mergedText(parts: MetricsJson[]): Promise<string> {
  return AggregatorRegistry.aggregate(parts).metrics();
}

export const PROMETHEUS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;
