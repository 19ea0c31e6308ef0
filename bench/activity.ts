import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spreadTempDir } from './fixtures.ts';
import { adminToken, spawnServer } from './server.ts';
import { median } from './streams.ts';
import { cpuTimes, totalCpu } from './transfer-cpu.ts';

const ROOT = path.resolve(import.meta.dir, '..');

/** Reads an SSE response until `count` change events have come (with 0, until its `connected` message). */
async function readEvents(res: Response, count: number): Promise<{ ids: number[]; firstId: number | null }> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const ids: number[] = [];
  let firstId: number | null = null;
  let buffer = '';
  try {
    while (count === 0 ? firstId === null : ids.length < count) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`the stream ended after ${ids.length} events`);
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /\nid: (\d+)$/.exec(block)?.[1];
        if (block.startsWith('data: {"type":"connected"}')) firstId = id ? Number(id) : null;
        else if (id) ids.push(Number(id));
      }
    }
  } finally {
    await reader.cancel();
  }
  return { ids, firstId };
}

/**
 * Replay after a drop: `missed` folders made while no stream was open, then a stream opened with
 * `Last-Event-ID` reads them all; wall time to the last event and the server's CPU seconds for it.
 */
export async function runActivityBench(missed = 10_000, rounds = 5, clients = 4): Promise<void> {
  const dataDir = spreadTempDir('coffer-bench-activity-');
  const { url, proc } = await spawnServer([process.execPath, path.join(ROOT, 'src/main.ts')], dataDir, {
    LOG_LEVEL: 'warn',
    COFFER_GENERAL_RATE_LIMIT: '1000000000',
  });
  const headers = { cookie: `token=${await adminToken(url)}` };
  try {
    const mark = (await readEvents(await fetch(`${url}/api/files/events`, { headers }), 0)).firstId;
    if (mark === null) throw new Error('the connected message carried no id');
    let next = 0;
    const make = async () => {
      while (next < missed) {
        const i = next++;
        const res = await fetch(`${url}/api/files/folder`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `f${i}` }),
        });
        if (res.status !== 200) throw new Error(`folder: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: clients }, make));
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const cpu0 = totalCpu(cpuTimes(proc.pid));
      const t0 = performance.now();
      const res = await fetch(`${url}/api/files/events`, { headers: { ...headers, 'Last-Event-ID': String(mark) } });
      const { ids } = await readEvents(res, missed);
      wall.push((performance.now() - t0) / 1000);
      cpu.push(totalCpu(cpuTimes(proc.pid)) - cpu0);
      if (ids.some((id, i) => i > 0 && id <= ids[i - 1]!)) throw new Error('replayed events out of order');
    }
    const [load1] = os.loadavg();
    console.log(
      `activity.replay_${missed}_events_s ${median(wall).toFixed(3)} server_cpu_s ${median(cpu).toFixed(3)} ` +
        `(median of ${rounds}: wall ${wall.map((x) => x.toFixed(3)).join(',')} cpu ${cpu.map((x) => x.toFixed(2)).join(',')}; ` +
        `one stream, Last-Event-ID before ${missed} folders made over HTTP, from source; load ${load1!.toFixed(1)} on ${os.cpus().length} cores)`,
    );
  } finally {
    proc.kill('SIGTERM');
    await proc.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) await runActivityBench();
