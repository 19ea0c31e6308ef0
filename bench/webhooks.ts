import fs from 'node:fs';
import os from 'node:os';
import { cpuSeconds, quantile } from './live-server.ts';
import { adminToken, startBenchServer } from './server.ts';

const PHASE_MS = Number(process.env.WEBHOOK_BENCH_PHASE_SECONDS ?? 10) * 1000;
const ROUNDS = Number(process.env.WEBHOOK_BENCH_ROUNDS ?? 6);
const PER_MINUTE = 1000;
const READERS = 4;
const FOLDER_ITEMS = 200;

// The receiver runs in its own process, so its work is not counted as the server's or the client's.
const RECEIVER = `
let n = 0;
const s = Bun.serve({ port: 0, hostname: '127.0.0.1', async fetch(r) {
  if (r.method === 'GET') return new Response(String(n));
  await r.text(); n++; return new Response('ok');
} });
console.log(s.port);
`;

async function startReceiver(): Promise<{ url: string; count: () => Promise<number>; stop: () => void }> {
  const child = Bun.spawn([process.execPath, '-e', RECEIVER], { stdout: 'pipe', stderr: 'inherit' });
  const line = new TextDecoder().decode((await child.stdout.getReader().read()).value);
  const url = `http://127.0.0.1:${line.trim()}`;
  return { url, count: async () => Number(await (await fetch(url)).text()), stop: () => child.kill() };
}

/**
 * `npm run bench -- webhooks`: GET /api/files (a 200-item folder page, READERS clients back to back)
 * while folders are created at 1,000 a minute, alternately without a webhook (phase "off") and with one
 * enabled for `item.created` (phase "on", 1,000 deliveries a minute to a receiver on loopback), ROUNDS
 * times each: p50 and p99 of each, their ratio, the deliveries made, and the server's CPU per delivery.
 */
export async function runWebhooksBench(): Promise<void> {
  const receiver = await startReceiver();
  const server = await startBenchServer({ WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', COFFER_GENERAL_RATE_LIMIT: '100000000' });
  const load = () => (Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]) || 0).toFixed(2);
  const loadBefore = load();
  try {
    const token = await adminToken(server.url);
    const headers = { cookie: `token=${token}`, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown, method = 'POST') => {
      const res = await fetch(`${server.url}${path}`, { method, headers, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, any>;
    };
    for (let i = 0; i < FOLDER_ITEMS; i++) await post('/api/files/folder', { name: `listed ${String(i).padStart(3, '0')}` });
    const churn = (await post('/api/files/folder', { name: 'churn' })).id as string;
    const { webhook } = await post('/api/webhooks', { url: `${receiver.url}/in`, events: ['item.created'], enabled: false });

    const phase = async (on: boolean, readers = READERS) => {
      await post(`/api/webhooks/${webhook.id}`, { enabled: on }, 'PATCH');
      const latencies: number[] = [];
      const end = performance.now() + PHASE_MS;
      const cpu0 = cpuSeconds(server.pid);
      let made = 0;
      const writer = (async () => {
        const interval = 60_000 / PER_MINUTE;
        const start = performance.now();
        while (performance.now() < end) {
          await post('/api/files/folder', {
            name: `c${on ? 'on' : 'off'}-${made++}-${Math.random().toString(36).slice(2, 8)}`,
            parentId: churn,
          });
          const next = start + made * interval;
          const wait = next - performance.now();
          if (wait > 0) await Bun.sleep(wait);
        }
      })();
      const reader = async () => {
        while (performance.now() < end) {
          const t0 = performance.now();
          const res = await fetch(`${server.url}/api/files?limit=${FOLDER_ITEMS}`, { headers });
          await res.arrayBuffer();
          if (!res.ok) throw new Error(`GET /api/files: ${res.status}`);
          latencies.push(performance.now() - t0);
        }
      };
      await Promise.all([writer, ...Array.from({ length: readers }, reader)]);
      const cpu = cpuSeconds(server.pid);
      return { latencies, made, cpu: cpu.user + cpu.system - cpu0.user - cpu0.system, seconds: PHASE_MS / 1000 };
    };

    const off: Awaited<ReturnType<typeof phase>>[] = [];
    const on: Awaited<ReturnType<typeof phase>>[] = [];
    const delivered0 = await receiver.count();
    for (let round = 0; round < ROUNDS; round++) {
      off.push(await phase(false));
      on.push(await phase(true));
    }
    // The server's CPU with the writer alone, so the readers' CPU does not drown the deliveries'.
    const quietOff = await phase(false, 0);
    const quietOn = await phase(true, 0);
    // Let the last deliveries of the last "on" phase land.
    const expected = on.reduce((n, p) => n + p.made, 0) + quietOn.made;
    for (let i = 0; i < 100 && (await receiver.count()) - delivered0 < expected; i++) await Bun.sleep(100);
    const delivered = (await receiver.count()) - delivered0;

    const all = (ps: typeof on) => ps.flatMap((p) => p.latencies);
    const ms = (v: number) => v.toFixed(2);
    const [offAll, onAll] = [all(off), all(on)];
    const p99 = [quantile(offAll, 0.99), quantile(onAll, 0.99)] as const;
    const onSeconds = on.reduce((s, p) => s + p.seconds, 0) + quietOn.seconds;
    console.log(
      `webhooks.deliveries_per_minute ${((delivered / onSeconds) * 60).toFixed(0)} (${delivered} delivered, ${expected} folders created in the "on" phases; goal 1000)`,
    );
    const ratios = off.map((p, i) => quantile(on[i]!.latencies, 0.99) / quantile(p.latencies, 0.99));
    console.log(
      `webhooks.list_p99_ms off ${ms(p99[0])} on ${ms(p99[1])} ratio ${(p99[1] / p99[0]).toFixed(3)}, median of the ${ROUNDS} rounds' ratios ${quantile(ratios, 0.5).toFixed(3)} (p50 off ${ms(quantile(offAll, 0.5))} on ${ms(quantile(onAll, 0.5))}; ${offAll.length} and ${onAll.length} requests of a ${FOLDER_ITEMS}-item page, ${READERS} clients; goal ratio <= 1.10)`,
    );
    console.log(
      `webhooks.rounds p99 ms off/on: ${off.map((p, i) => `${ms(quantile(p.latencies, 0.99))}/${ms(quantile(on[i]!.latencies, 0.99))}`).join(', ')}`,
    );
    console.log(
      `webhooks.server_cpu_per_delivery_ms ${(((quietOn.cpu - quietOff.cpu) / Math.max(1, quietOn.made)) * 1000).toFixed(2)} (the writer alone, ${PHASE_MS / 1000} s each: server CPU ${quietOff.cpu.toFixed(2)} s without, ${quietOn.cpu.toFixed(2)} s with ${quietOn.made} deliveries); load average ${loadBefore} before, ${load()} after, ${os.availableParallelism()} cores`,
    );
  } finally {
    await server.stop();
    receiver.stop();
  }
}
