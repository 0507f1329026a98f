/**
 * The default log sink, in a real child process: request lines reach stdout in one write by the flush timer, while
 * the process goes on (not one system call per line), an error line at once, and nothing is lost when the process exits.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { logRequest, refreshLogLevel, setLogSink } from './log';

/** Run a script that logs through lib/ops/log.ts until it ends; collect its stdout chunks and its stderr. */
function run(script: string): Promise<{ out: { text: string }[]; err: string; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `import { log, logRequest } from './lib/ops/log.ts';\n${script}`], {
      env: { ...process.env, SWARM_LOG_LEVEL: 'info' },
    });
    const out: { text: string }[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push({ text: c.toString() }));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('close', (code) => resolve({ out, err, code }));
  });
}

const request = (i: number) => `logRequest({ method: 'POST', route: '/api/v1/permissions/check', status: 200, durationMs: 0.1, decisionId: 'd${i}' });`;

describe('the default log sink', () => {
  it('writes the request lines of a burst together, by the flush timer, while the process goes on', async () => {
    // The child logs a burst, then stays alive reading stdin: it ends only when this test closes its stdin, once all
    // hundred lines have come (or after 10 s, when they have not: a sink that wrote only at exit fails here).
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `import { logRequest } from './lib/ops/log.ts';\n${Array.from({ length: 100 }, (_, i) => request(i)).join('\n')}\nprocess.stdin.on('end', () => process.stderr.write('released')).resume();`], {
      env: { ...process.env, SWARM_LOG_LEVEL: 'info' },
    });
    const chunks: string[] = [];
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const whole = () => chunks.join('').split('\n').length > 100;
    const all = await new Promise<boolean>((resolve) => {
      const limit = setTimeout(() => resolve(false), 10_000);
      child.stdout.on('data', (c: Buffer) => {
        chunks.push(c.toString());
        if (whole()) resolve(true), clearTimeout(limit);
      });
    });
    const beforeRelease = chunks.length;
    child.stdin.end();
    expect(await exited).toBe(0);
    expect(err).toBe('released');
    // every line written while the process was still running, in order
    expect(all).toBe(true);
    const lines = chunks.join('').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { decision_id: string }).decision_id)).toEqual(Array.from({ length: 100 }, (_, i) => `d${i}`));
    // one write of all hundred lines (the pipe may split a large write, never per line), nothing left for the exit
    expect(beforeRelease).toBeLessThanOrEqual(2);
    expect(chunks).toHaveLength(beforeRelease);
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
