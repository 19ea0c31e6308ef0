import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import { openContext } from '../src/composition.ts';
import { createLogger } from '../src/log.ts';
import { newId } from '../src/lib/ids.ts';
import { adminToken } from './server.ts';
import { canRaiseDescriptors, cpuSeconds, descriptorLimit, quantile, rssMiB, startLiveServer } from './live-server.ts';
import { median } from './streams.ts';

const LOGINS = Number(process.env.STREAMS_LOGINS ?? 1000);
const PER_LOGIN = 20;
const CLIENTS = 4;
const ROUNDS = 5;
// Descriptors the server needs beside its streams: its own files and listener (about 20) and the bench's requests.
const RESERVE = 100;

interface Client {
  proc: ReturnType<typeof Bun.spawn>;
  next(): Promise<Record<string, unknown>>;
  send(line: string): void;
}

function startClient(port: number, tokensFile: string, first: number, count: number): Client {
  const proc = Bun.spawn(
    [
      process.execPath,
      path.join(import.meta.dir, 'event-streams-client.ts'),
      String(port),
      tokensFile,
      String(first),
      String(count),
      String(PER_LOGIN),
    ],
    { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' },
  );
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const next = async (): Promise<Record<string, unknown>> => {
    for (;;) {
      const nl = buffer.indexOf('\n');
      if (nl >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const msg = JSON.parse(line) as Record<string, unknown>;
        if (msg.error) throw new Error(`event-streams client: ${msg.error}`);
        return msg;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error('an event-streams client exited');
      buffer += decoder.decode(value, { stream: true });
    }
  };
  return {
    proc,
    next,
    send: (line) => {
      proc.stdin.write(`${line}\n`);
      proc.stdin.flush();
    },
  };
}

interface Target {
  url: string;
  port: number;
  pid: number;
  /** Makes one change every stream receives, named `name`. */
  change(name: string): Promise<void>;
}

interface Figures {
  idle: number;
  open: number;
  after: number;
  peak: number;
  connectSeconds: number;
  connectCpu: { user: number; system: number };
  health: number[];
  fanout: number[];
  fanoutCpu: { user: number; system: number };
}

/** Opens `total` streams from the client processes against `target`, then times `ROUNDS` changes reaching all of them. */
async function measure(target: Target, tokensFile: string, total: number): Promise<Figures> {
  const clients: Client[] = [];
  try {
    const idle = rssMiB(target.pid).rss;
    const cpuBefore = cpuSeconds(target.pid);
    const share = Math.ceil(total / PER_LOGIN / CLIENTS) * PER_LOGIN;
    const connectStart = performance.now();
    for (let first = 0; first < total; first += share)
      clients.push(startClient(target.port, tokensFile, first, Math.min(share, total - first)));
    let allReady = false;
    const ready = Promise.all(clients.map((c) => c.next())).then(() => {
      allReady = true;
    });
    const health: number[] = [];
    while (!allReady) {
      const t = performance.now();
      const res = await fetch(`${target.url}/health`);
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`/health: ${res.status}`);
      health.push(performance.now() - t);
      await Promise.race([ready, Bun.sleep(10)]);
    }
    await ready;
    const connectSeconds = (performance.now() - connectStart) / 1000;
    const cpuConnected = cpuSeconds(target.pid);
    const open = rssMiB(target.pid).rss;
    const fanout: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const name = `live-${round}-${newId()}`;
      for (const c of clients) c.send(`expect ${name}`);
      await Promise.all(clients.map((c) => c.next()));
      const start = performance.timeOrigin + performance.now();
      const arrived = Promise.all(clients.map((c) => c.next()));
      await target.change(name);
      const lasts = (await arrived).map((m) => Number(m.last));
      fanout.push(Math.max(...lasts) - start);
    }
    const cpuEnd = cpuSeconds(target.pid);
    const { rss: after, peak } = rssMiB(target.pid);
    const less = (a: { user: number; system: number }, b: { user: number; system: number }) => ({
      user: a.user - b.user,
      system: a.system - b.system,
    });
    return {
      idle,
      open,
      after,
      peak,
      connectSeconds,
      connectCpu: less(cpuConnected, cpuBefore),
      health,
      fanout,
      fanoutCpu: less(cpuEnd, cpuConnected),
    };
  } finally {
    for (const c of clients) c.proc.kill();
    await Promise.all(clients.map((c) => c.proc.exited));
  }
}

function report(label: string, f: Figures, total: number, goals: boolean): void {
  const mib = (x: number) => x.toFixed(1);
  const cpu = (c: { user: number; system: number }) => `user ${c.user.toFixed(2)} s, system ${c.system.toFixed(2)} s`;
  const at20k = f.idle + ((f.open - f.idle) * 20_000) / total;
  console.log(
    `${label}.rss_MiB idle ${mib(f.idle)}; with ${total} streams open ${mib(f.open)} (${(((f.open - f.idle) * 1024) / total).toFixed(1)} KiB a stream${total < 20_000 ? `; ${at20k.toFixed(0)} at 20,000 at this rate` : ''}); after ${ROUNDS} events ${mib(f.after)}, peak ${mib(f.peak)}${goals ? ' (goal < 400 with 20,000)' : ''}`,
  );
  console.log(`${label}.connect_s ${f.connectSeconds.toFixed(1)} (server CPU ${cpu(f.connectCpu)})`);
  console.log(
    `${label}.health_while_connecting_ms p50 ${quantile(f.health, 0.5).toFixed(2)} p99 ${quantile(f.health, 0.99).toFixed(2)} max ${Math.max(...f.health).toFixed(2)} (${f.health.length} requests, one at a time${goals ? '; goal p99 < 50' : ''})`,
  );
  console.log(
    `${label}.event_to_all_ms median ${median(f.fanout).toFixed(0)} max ${Math.max(...f.fanout).toFixed(0)} (rounds ${f.fanout.map((x) => x.toFixed(0)).join(', ')}: one change until the last of ${total} streams has it; server CPU for the ${ROUNDS} rounds ${cpu(f.fanoutCpu)}${goals ? '; goal < 500' : ''})`,
  );
}

/**
 * `npm run bench -- streams`: 1,000 logins (sub-users of one account) × 20 event streams each (the per-login
 * cap) held by 4 client processes against the built executable: the server's RSS with them open, `/health`
 * latency while they connect, and one change (a folder created) until the last stream has it. First the same
 * against a bare Bun server doing only an event stream's unavoidable work, as the runtime's reference.
 */
export async function runEventStreamsBench(): Promise<void> {
  const needed = LOGINS * PER_LOGIN + RESERVE;
  const { hard } = descriptorLimit();
  // Without CAP_SYS_RESOURCE the hard limit cannot be raised: as many whole logins as fit, and the bench says so.
  const logins = canRaiseDescriptors(needed) ? LOGINS : Math.floor((hard - RESERVE) / PER_LOGIN);
  if (logins < LOGINS) {
    console.log(
      `streams: ${LOGINS * PER_LOGIN} streams need ${needed} descriptors in the server; the hard limit here is ${hard} and raising it is not permitted (needs root with CAP_SYS_RESOURCE, or \`ulimit -Hn ${needed}\` before the bench): measuring ${logins * PER_LOGIN} streams (${logins} logins × ${PER_LOGIN})`,
    );
  }
  const nofile = logins < LOGINS ? hard : needed;
  const total = logins * PER_LOGIN;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-streams-'));
  const tokensFile = path.join(dir, 'tokens');
  try {
    fs.writeFileSync(tokensFile, Array.from({ length: logins }, (_, i) => `bare-${i}`).join('\n'));
    const port = 30000 + Math.floor(Math.random() * 2000);
    const prlimit = nofile > descriptorLimit().soft ? ['prlimit', `--nofile=${nofile}:${nofile}`] : [];
    const bare = Bun.spawn([...prlimit, process.execPath, path.join(import.meta.dir, 'event-streams-bare.ts'), String(port)], {
      stderr: 'inherit',
    });
    try {
      const url = `http://127.0.0.1:${port}`;
      for (
        let i = 0;
        !(await fetch(`${url}/health`).then(
          (r) => r.ok,
          () => false,
        ));
        i++
      ) {
        if (i > 500) throw new Error('the bare reference server did not start');
        await Bun.sleep(20);
      }
      const change = async (name: string) => {
        const res = await fetch(`${url}/api/files/folder`, { method: 'POST', body: JSON.stringify({ name }) });
        if (!res.ok) throw new Error(`bare change: ${res.status}`);
      };
      report('streams.bare_bun', await measure({ url, port, pid: bare.pid, change }, tokensFile, total), total, false);
    } finally {
      bare.kill();
      await bare.exited;
    }

    const server = await startLiveServer({ COFFER_GENERAL_RATE_LIMIT: '1000000000', COFFER_MAX_CONNECTIONS_PER_IP: '0' }, { nofile });
    try {
      const ownerToken = await adminToken(server.url);
      const auth = { authorization: `Bearer ${ownerToken}`, 'content-type': 'application/json' };
      const owner = (await (await fetch(`${server.url}/api/profile`, { headers: auth })).json()) as { id: string };
      const ctx = openContext(loadConfig({ dataDir: server.dataDir }, {}), { mode: 'cli', logger: createLogger('silent') });
      const tokens: string[] = [];
      try {
        // Sub-users of the owner, written beside the running server (WAL): each a login of the same account.
        for (let i = 0; i < logins; i++) {
          const email = `login-${i}@example.test`;
          const row = ctx.repos.users.insert({
            id: newId(),
            email,
            emailKey: email,
            name: `Login ${i}`,
            passwordHash: null,
            isAdmin: false,
            parentUserId: owner.id,
            permissions: '[]',
            createdAt: Date.now(),
          });
          tokens.push((await ctx.services.sessions.start(row.id, { ip: '127.0.0.1', userAgent: 'bench' })).token);
        }
      } finally {
        ctx.close();
      }
      fs.writeFileSync(tokensFile, tokens.join('\n'));
      const change = async (name: string) => {
        const res = await fetch(`${server.url}/api/files/folder`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ name, parentId: null }),
        });
        if (!res.ok) throw new Error(`folder: ${res.status}`);
      };
      report('streams', await measure({ url: server.url, port: server.port, pid: server.pid, change }, tokensFile, total), total, true);
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await runEventStreamsBench();
