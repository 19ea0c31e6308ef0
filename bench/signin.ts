import http from 'node:http';
import { adminToken, type BenchServer, startBenchServer } from './server.ts';

const GUESSERS = 32;
const ATTACK_MS = 8_000;
const OTHER_ADDRESS = '127.0.0.2';
const USER = { email: 'bench@example.test', password: 'bench password' };

/** POST /api/login from `localAddress` over node:http (fetch cannot choose its source address); the status and the time taken. */
function signInFrom(url: string, localAddress: string, body: object): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const target = new URL(`${url}/api/login`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        localAddress,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;

/** Sign-ins of the real user from another address, one after another, for `durationMs`: sorted latencies. */
async function userSignIns(url: string, durationMs: number): Promise<number[]> {
  const times: number[] = [];
  const end = performance.now() + durationMs;
  while (performance.now() < end) {
    const r = await signInFrom(url, OTHER_ADDRESS, USER);
    if (r.status !== 200) throw new Error(`the real user's sign-in answered ${r.status}`);
    times.push(r.ms);
    await Bun.sleep(100);
  }
  return times.sort((a, b) => a - b);
}

/** 32 loops guessing from 127.0.0.1, a new email each time (so the per-email limiter never trips), while the user signs in from 127.0.0.2. */
async function underAttack(server: BenchServer): Promise<{ user: number[]; statuses: Record<number, number> }> {
  const statuses: Record<number, number> = {};
  let stop = false;
  let n = 0;
  const guesser = async () => {
    while (!stop) {
      const res = await fetch(`${server.url}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: `guess-${++n}@example.test`, password: 'a guess' }),
      });
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
  };
  const guessers = Array.from({ length: GUESSERS }, guesser);
  await Bun.sleep(500);
  const user = await userSignIns(server.url, ATTACK_MS);
  stop = true;
  await Promise.all(guessers);
  return { user, statuses };
}

/** Median time of a failed WebDAV Basic request for `email`, alternating with the other kind so load hits both alike. */
async function davFailures(url: string, emails: string[], rounds: number): Promise<number[]> {
  const times: number[][] = emails.map(() => []);
  for (let i = 0; i < rounds; i++) {
    for (const [k, email] of emails.entries()) {
      const started = performance.now();
      const res = await fetch(`${url}/dav/`, {
        method: 'PROPFIND',
        headers: { depth: '0', authorization: `Basic ${Buffer.from(`${email}:wrong password ${i}`).toString('base64')}` },
      });
      await res.arrayBuffer();
      if (res.status !== 401) throw new Error(`WebDAV with a wrong password answered ${res.status}`);
      times[k]!.push(performance.now() - started);
    }
  }
  return times.map((t) =>
    quantile(
      t.sort((a, b) => a - b),
      0.5,
    ),
  );
}

/**
 * Sign-in under a password-guessing flood from one address that rotates emails: the real user's sign-in
 * latency from another address, without the per-address hash budget (raised out of reach) and with it
 * (the default); then WebDAV Basic failures for an unknown and a known email.
 */
export async function runSigninBench(): Promise<void> {
  for (const [label, budget] of [
    ['without the per-address hash budget', '1000000000'],
    ['with the default budget (60 a minute)', undefined],
  ] as const) {
    // The sign-in limiter per address and email is raised too, so the WebDAV timings below can repeat one email.
    const server = await startBenchServer({
      LOG_LEVEL: 'warn',
      COFFER_AUTH_RATE_LIMIT: '1000000',
      ...(budget ? { COFFER_PASSWORD_HASH_RATE_LIMIT: budget } : {}),
    });
    try {
      const token = await adminToken(server.url, USER.email, USER.password);
      const quiet = await userSignIns(server.url, 2_000);
      const { user, statuses } = await underAttack(server);
      console.log(
        `signin.${budget ? 'unlimited' : 'budget'} (${label}): the user's sign-in p50 ${ms(quantile(quiet, 0.5))} when quiet; under ${GUESSERS} guessers p50 ${ms(quantile(user, 0.5))} p90 ${ms(quantile(user, 0.9))} (${user.length} sign-ins in ${ATTACK_MS / 1000} s); the guessers' answers ${JSON.stringify(statuses)}`,
      );
      if (budget) {
        for (const allowed of [false, true]) {
          const res = await fetch(`${server.url}/api/user/webdav-account-password-config`, {
            method: 'PUT',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body: JSON.stringify({ enabled: allowed }),
          });
          if (!res.ok) throw new Error(`webdav-account-password-config: ${res.status}`);
          const [unknown, known] = await davFailures(server.url, ['nobody@example.test', USER.email], 30);
          console.log(
            `signin.dav_failure_ms account passwords ${allowed ? 'allowed' : 'off (default)'}: unknown email p50 ${ms(unknown!)}, known email with a wrong password p50 ${ms(known!)} (30 each, alternating)`,
          );
        }
      }
    } finally {
      await server.stop();
    }
  }
}

if (import.meta.main) await runSigninBench();
