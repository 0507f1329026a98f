import { afterEach, describe, expect, it } from 'vitest';
import { tempApp, type TempApp } from '@/lib/test-support/temp-app';
import { within } from '@/lib/test-support/wait';
import { FLAG_CATALOG } from './catalog';
import { parseBoolean, resolveFlags } from './resolve';

const none = new Map();
const override = (value: boolean) => new Map([['cron_scheduler', { value, setBy: 'ada', setAt: 1, reason: 'r' }]]);

describe('flag resolution', () => {
  it('has about twenty flags in three tiers, including the named ones', () => {
    expect(FLAG_CATALOG.length).toBeGreaterThanOrEqual(18);
    const byName = new Map(FLAG_CATALOG.map((f) => [f.name, f.tier]));
    expect(byName.get('audit_trail_security_events')).toBe('invariant');
    for (const f of ['cron_scheduler', 'batch_runner', 'auto_fairness_audit']) expect(byName.get(f)).toBe('flag');
    for (const f of ['plugin_shell_hooks_enabled', 'hooks_enabled', 'evaluator_grading']) expect(byName.get(f)).toBe('experiment');
  });

  it('takes the declared default when nothing else is set', () => {
    const r = resolveFlags(none, {}).flags.get('cron_scheduler')!;
    expect([r.value, r.layer]).toEqual([true, 'default']);
  });

  it('orders the layers override > env > alias > default', () => {
    const env = { SWARM_FLAG_CRON_SCHEDULER: 'off', ML_TEAM_CRON_ENABLED: 'on' };
    expect(resolveFlags(none, { ML_TEAM_CRON_ENABLED: 'off' }).flags.get('cron_scheduler')).toMatchObject({ value: false, layer: 'alias' });
    expect(resolveFlags(none, env).flags.get('cron_scheduler')).toMatchObject({ value: false, layer: 'env', variable: 'SWARM_FLAG_CRON_SCHEDULER' });
    expect(resolveFlags(override(true), env).flags.get('cron_scheduler')).toMatchObject({ value: true, layer: 'override' });
  });

  it('refuses every layer that would turn an invariant off, and says so', () => {
    const r = resolveFlags(new Map([['audit_trail_security_events', { value: false, setBy: 'x', setAt: 1, reason: 'r' }]]), {
      SWARM_FLAG_AUDIT_TRAIL_SECURITY_EVENTS: 'false',
    });
    expect(r.flags.get('audit_trail_security_events')).toMatchObject({ value: true, layer: 'default' });
    expect(r.problems.filter((p) => p.flag === 'audit_trail_security_events')).toHaveLength(2);
  });

  it('reports an unknown flag variable and a non-boolean value instead of ignoring them silently', () => {
    const r = resolveFlags(none, { SWARM_FLAG_NO_SUCH_THING: 'on', SWARM_FLAG_BATCH_RUNNER: 'maybe' });
    expect(r.problems.map((p) => p.message).join('\n')).toMatch(/SWARM_FLAG_NO_SUCH_THING names no flag/);
    expect(r.problems.map((p) => p.message).join('\n')).toMatch(/"maybe" is not a boolean/);
    expect(r.flags.get('batch_runner')!.layer).toBe('default');
  });

  it('labels each problem with its kind, so the page and the API need not parse messages', () => {
    const r = resolveFlags(new Map([['retired_flag', { value: true, setBy: 'x', setAt: 1, reason: 'r' }]]), {
      SWARM_FLAG_NO_SUCH_THING: 'on',
      SWARM_FLAG_BATCH_RUNNER: 'maybe',
      SWARM_FLAG_HITL_GATES: 'off',
    });
    expect(r.problems.map((p) => [p.kind, p.flag ?? p.variable])).toEqual([
      ['unknown_flag', 'SWARM_FLAG_NO_SUCH_THING'],
      ['unknown_flag', 'retired_flag'],
      ['invariant_refused', 'hitl_gates'],
      ['not_boolean', 'batch_runner'],
    ]);
  });

  it('reports a legacy alias that belongs to no flag, and honours the declared ones', () => {
    const r = resolveFlags(none, { ML_TEAM_CRON_ENABLED: 'off', ML_TEAM_CRONN_ENABLED: 'off', UNRELATED_SETTING: 'x' });
    expect(r.flags.get('cron_scheduler')).toMatchObject({ value: false, layer: 'alias', variable: 'ML_TEAM_CRON_ENABLED' });
    expect(r.problems).toEqual([
      { kind: 'unknown_flag', variable: 'ML_TEAM_CRONN_ENABLED', message: 'ML_TEAM_CRONN_ENABLED is not an alias of any flag in the catalog; it has no effect.' },
    ]);
  });

  it('refuses an alias that would turn an invariant off just like the variable itself', () => {
    const invariant = { ...FLAG_CATALOG[0]!, aliases: ['ML_TEAM_AUDIT'] };
    const r = resolveFlags(none, { ML_TEAM_AUDIT: 'off' }, [invariant]);
    expect(r.flags.get(invariant.name)).toMatchObject({ value: true, layer: 'default' });
    expect(r.problems).toEqual([expect.objectContaining({ kind: 'invariant_refused', variable: 'ML_TEAM_AUDIT' })]);
  });

  it('lets an override, env or alias turn an experiment on and a flag off (only invariants refuse)', () => {
    const r = resolveFlags(none, { SWARM_FLAG_EVALUATOR_GRADING: 'on', ML_TEAM_BATCH_ENABLED: 'off' });
    expect(r.flags.get('evaluator_grading')).toMatchObject({ tier: 'experiment', value: true, layer: 'env' });
    expect(r.flags.get('batch_runner')).toMatchObject({ tier: 'flag', value: false, layer: 'alias' });
    expect(r.problems).toEqual([]);
  });

  it('parses the usual spellings of true and false', () => {
    expect(['1', 'true', 'ON', 'yes', 'enabled'].map(parseBoolean)).toEqual([true, true, true, true, true]);
    expect(['0', 'false', 'Off', 'no', 'disabled'].map(parseBoolean)).toEqual([false, false, false, false, false]);
    expect(parseBoolean('2')).toBeUndefined();
  });
});

describe('flag overrides in the database', () => {
  let t: TempApp | undefined;
  afterEach(() => {
    t?.cleanup();
    t = undefined;
  });

  it('keeps every change in the history, with who, old and new value and reason', () => {
    t = tempApp();
    t.app.flags.setOverride('batch_runner', false, 'ada', 'incident 7');
    t.app.flags.unsetOverride('batch_runner', 'ada', 'resolved');
    const h = t.app.flags.history({ name: 'batch_runner' });
    expect(h.map((c) => [c.action, c.oldValue, c.newValue, c.changedBy, c.reason])).toEqual([
      ['unset', false, true, 'ada', 'resolved'],
      ['set', true, false, 'ada', 'incident 7'],
    ]);
  });

  it('filters the history by flag and by who, newest first, and pages it with a cursor', () => {
    t = tempApp();
    const f = t.app.flags;
    f.setOverride('batch_runner', false, 'ada', 'one');
    f.setOverride('cron_scheduler', false, 'grace', 'two');
    f.setOverride('batch_runner', true, 'grace', 'three');
    f.unsetOverride('cron_scheduler', 'ada', 'four');
    const reasons = (rows: { reason: string }[]) => rows.map((r) => r.reason);
    expect(reasons(f.history())).toEqual(['four', 'three', 'two', 'one']);
    expect(reasons(f.history({ name: 'batch_runner' }))).toEqual(['three', 'one']);
    expect(reasons(f.history({ by: 'ada' }))).toEqual(['four', 'one']);
    expect(reasons(f.history({ name: 'cron_scheduler', by: 'grace' }))).toEqual(['two']);
    expect(f.history({ by: 'nobody' })).toEqual([]);
    const first = f.history({ limit: 3 });
    expect(reasons(f.history({ before: first[first.length - 1]!.id }))).toEqual(['one']);
  });

  it('knows the last change of each flag and everyone who changed one', () => {
    t = tempApp();
    const f = t.app.flags;
    expect(f.lastChanges().size).toBe(0);
    f.setOverride('batch_runner', false, 'ada', 'first');
    f.setOverride('batch_runner', true, 'grace', 'second');
    f.setOverride('cron_scheduler', false, 'ada', 'third');
    const last = f.lastChanges();
    expect([...last.keys()].sort()).toEqual(['batch_runner', 'cron_scheduler']);
    expect(last.get('batch_runner')).toMatchObject({ changedBy: 'grace', reason: 'second', oldValue: false, newValue: true });
    expect(f.historyAuthors()).toEqual(['ada', 'grace']);
    expect(f.historyNames()).toEqual(['batch_runner', 'cron_scheduler']);
  });

  it('refuses a change without a reason, and one to an unknown flag, and keeps no history of them', () => {
    t = tempApp();
    expect(() => t!.app.flags.setOverride('batch_runner', false, 'ada', '   ')).toThrow(/reason/);
    expect(() => t!.app.flags.setOverride('no_such_flag', false, 'ada', 'r')).toThrow(/no flag named/);
    expect(() => t!.app.flags.unsetOverride('batch_runner', 'ada', 'r')).toThrow(/no runtime override/);
    expect(t.app.flags.history()).toEqual([]);
  });

  it('refuses to turn off an invariant by override', () => {
    t = tempApp();
    expect(() => t!.app.flags.setOverride('audit_trail_security_events', false, 'ada', 'x')).toThrow(/invariant/);
    expect(t.app.flags.get('audit_trail_security_events').value).toBe(true);
  });

  it('sees an override written by another process within a second', async () => {
    t = tempApp();
    const { createApp } = await import('@/lib/app');
    const other = createApp({ dbPath: t.dbPath, configDir: t.dir, env: {} });
    try {
      expect(other.flags.values().get('batch_runner')).toBe(true);
      t.app.flags.setOverride('batch_runner', false, 'ada', 'r');
      // Waits for the change, failing after a second (how often another process looks is the service's business).
      await within(1_000, () => other.flags.values().get('batch_runner') === false);
    } finally {
      other.db.$client.close();
    }
  });
});
