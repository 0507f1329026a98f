import { afterEach, describe, expect, it } from 'vitest';
import { tempApp, type TempApp } from '../test-support/temp-app';
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

  it('refuses to turn off an invariant by override', () => {
    t = tempApp();
    expect(() => t!.app.flags.setOverride('audit_trail_security_events', false, 'ada', 'x')).toThrow(/invariant/);
    expect(t.app.flags.get('audit_trail_security_events').value).toBe(true);
  });

  it('sees an override written by another process within a second', async () => {
    t = tempApp();
    const { createApp } = await import('../app');
    const other = createApp({ dbPath: t.dbPath, configDir: t.dir, env: {} });
    try {
      expect(other.flags.values().get('batch_runner')).toBe(true);
      t.app.flags.setOverride('batch_runner', false, 'ada', 'r');
      await new Promise((r) => setTimeout(r, 600));
      expect(other.flags.values().get('batch_runner')).toBe(false);
    } finally {
      other.db.$client.close();
    }
  });
});
