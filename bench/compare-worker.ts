/**
 * One engine configuration of bench/compare.ts in its own worker thread (started by runCompareBench): builds the
 * workload and the engine, then answers the orchestrator's requests (agreement sample, warm-up, timing rounds, result).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { benchWorkload, limitsFor, Meter, setUpContender, type ContenderKey, type WorkerReply, type WorkerRequest } from './compare';
import { timerOverheadNs } from './engine';

async function main(key: ContenderKey): Promise<void> {
  const port = parentPort;
  if (!port) return;
  const send = (m: WorkerReply) => port.postMessage(m);
  try {
    const w = benchWorkload();
    const c = await setUpContender(key, w);
    const meter = new Meter(c.decide, w.expected, timerOverheadNs(), limitsFor(c.family));
    port.on('message', (m: WorkerRequest) => {
      try {
        if (m.type === 'agree') send({ type: 'agreed', decisions: m.indexes.map((i) => c.decide(i)) });
        else if (m.type === 'warmup') {
          meter.warmUp();
          send({ type: 'done' });
        } else if (m.type === 'round') {
          meter.round();
          send({ type: 'done' });
        } else send({ type: 'result', timing: meter.result() });
      } catch (e) {
        send({ type: 'error', message: `${c.engine}: ${e instanceof Error ? e.message : String(e)}` });
      }
    });
    const { decide: _decide, ...info } = c;
    send({ type: 'ready', info });
  } catch (e) {
    send({ type: 'error', message: `${key}: ${e instanceof Error ? e.stack ?? e.message : String(e)}` });
  }
}

if (parentPort && workerData) void main((workerData as { key: ContenderKey }).key);
