/**
 * The default log sink, in a real child process: request lines reach stdout in one write shortly after they are
 * logged (not one system call per line), an error line at once, and nothing is lost when the process exits.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { logRequest, refreshLogLevel, setLogSink } from './log';

/** Run a script that logs through lib/ops/log.ts; collect its stdout and stderr with the time each chunk came. */
function run(script: string): Promise<{ out: { at: number; text: string }[]; err: string; errAt: number; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `import { log, logRequest } from './lib/ops/log.ts';\n${script}`], {
      env: { ...process.env, SWARM_LOG_LEVEL: 'info' },
    });
    const started = Date.now();
    const out: { at: number; text: string }[] = [];
    let err = '';
    let errAt = -1;
    child.stdout.on('data', (c: Buffer) => out.push({ at: Date.now() - started, text: c.toString() }));
    child.stderr.on('data', (c: Buffer) => ((err += c.toString()), (errAt = Date.now() - started)));
    child.on('close', (code) => resolve({ out, err, errAt, code }));
  });
}

const request = (i: number) => `logRequest({ method: 'POST', route: '/api/v1/permissions/check', status: 200, durationMs: 0.1, decisionId: 'd${i}' });`;

describe('the default log sink', () => {
  it('writes the request lines of a burst together, within the flush delay, while the process goes on', async () => {
    const { out, errAt, code } = await run(`${Array.from({ length: 100 }, (_, i) => request(i)).join('\n')}\nsetTimeout(() => process.stderr.write('waited'), 600);`);
    expect(code).toBe(0);
    // written by the flush timer, well before the process wrote "waited" and ended
    expect(out[0]!.at).toBeLessThan(errAt - 300);
    const lines = out.map((c) => c.text).join('').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { decision_id: string }).decision_id)).toEqual(Array.from({ length: 100 }, (_, i) => `d${i}`));
    // one write of all hundred lines (the pipe may split a large write, never per line), before the process ended
    expect(out.length).toBeLessThanOrEqual(2);
  });

  it('writes an error line at once, and what is still buffered when the process exits', async () => {
    const { out, err, code } = await run(`log('error', 'disk full', { path: '/tmp' });\n${request(1)}\nsetImmediate(() => { process.stderr.write('\\nafter-turn'); process.exit(3); });`);
    expect(code).toBe(3);
    const errLines = err.split('\n').filter((l) => l !== '');
    expect(JSON.parse(errLines[0]!)).toMatchObject({ level: 'error', msg: 'disk full', path: '/tmp' });
    expect(errLines[1]).toBe('after-turn');
    expect(JSON.parse(out.map((c) => c.text).join('').trim())).toMatchObject({ msg: 'request', decision_id: 'd1' });
  });

  it('flushes at once when many lines wait, without waiting for the timer', async () => {
    // 1,200 lines in one turn: written in batches of 512 as they come, the rest at exit
    const { out, code } = await run(`for (let i = 0; i < 1200; i++) { ${request(0).replace("'d0'", '`d${i}`')} }\nprocess.stderr.write(String(Date.now()));`);
    expect(code).toBe(0);
    expect(out.map((c) => c.text).join('').trim().split('\n')).toHaveLength(1200);
  });
});

describe('a request line', () => {
  it('is valid JSON whatever the route, principal and decision id hold, with the time of the line', () => {
    const lines: string[] = [];
    const restore = setLogSink((line) => lines.push(line));
    const level = process.env.SWARM_LOG_LEVEL;
    process.env.SWARM_LOG_LEVEL = 'info';
    refreshLogLevel();
    try {
      const odd = ['/api/v1/permissions/check', '/a"b\\c', 'tab\there', 'ctl\u0001', 'ü€😀', '\ud800 lone', 'del\u007f'];
      for (const s of odd) {
        const before = Date.now();
        logRequest({ method: 'POST', route: s, status: 200, durationMs: 1.23456, decisionId: s, principal: `agent:${s}` });
        const line = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
        expect(line).toMatchObject({ route: s, decision_id: s, principal: `agent:${s}`, duration_ms: 1.235, status: 200 });
        expect(Date.parse(line.time as string)).toBeGreaterThanOrEqual(before);
        expect(Date.parse(line.time as string)).toBeLessThanOrEqual(Date.now());
      }
    } finally {
      if (level === undefined) delete process.env.SWARM_LOG_LEVEL;
      else process.env.SWARM_LOG_LEVEL = level;
      refreshLogLevel();
      restore();
    }
  });
});
