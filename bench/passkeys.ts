import fs from 'node:fs';
import { type CreationOptions, createPasskey, type RequestOptions, type SoftPasskey, signWithPasskey } from '../test/helpers/webauthn.ts';
import { adminToken, startBenchServer } from './server.ts';

const CONCURRENCY = 32;
const DURATION_MS = 8_000;

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;

/** The server process's CPU time so far (user + system), in milliseconds, from /proc. */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat, counted after the command name.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function post(origin: string, path: string, body: unknown, token?: string): Promise<Response> {
  return fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { cookie: `token=${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** One sign-in ceremony: options, the authenticator's answer, verification. Returns its round-trip time. */
async function ceremony(origin: string, passkey: SoftPasskey): Promise<number> {
  const started = performance.now();
  const options = (await (await post(origin, '/api/passkeys/sign-in/options', undefined)).json()) as RequestOptions;
  const res = await post(origin, '/api/passkeys/sign-in', await signWithPasskey(passkey, options, origin));
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`passkey sign-in answered ${res.status}`);
  return performance.now() - started;
}

/**
 * Passkey sign-in under 32 concurrent ceremonies (options + verification, each its own passkey) for 8 s,
 * against `coffer serve` from source on loopback: latency per ceremony, and the server's CPU time per
 * ceremony (from /proc, so the bench process's own signing is not counted); one ceremony at a time first.
 */
export async function runPasskeysBench(): Promise<void> {
  // Sign-in attempts of one login from one address: raised, or the limiter would be what is measured.
  const server = await startBenchServer({
    LOG_LEVEL: 'warn',
    COFFER_AUTH_RATE_LIMIT: '1000000000',
    COFFER_GENERAL_RATE_LIMIT: '1000000000',
  });
  try {
    // Browsers refuse an address as the relying party: speak to the server as localhost.
    const origin = server.url.replace('127.0.0.1', 'localhost');
    const password = 'bench password';
    const token = await adminToken(origin, undefined, password);
    const passkeys: SoftPasskey[] = [];
    for (let i = 0; i < CONCURRENCY; i++) {
      const options = (await (await post(origin, '/api/passkeys/register/options', { password }, token)).json()) as CreationOptions;
      const { passkey, response } = await createPasskey(options, origin);
      const res = await post(origin, '/api/passkeys', { name: `Bench ${i}`, response }, token);
      if (res.status !== 201) throw new Error(`adding a passkey answered ${res.status}`);
      passkeys.push(passkey);
    }
    const alone: number[] = [];
    for (let i = 0; i < 50; i++) alone.push(await ceremony(origin, passkeys[0]!));
    alone.sort((a, b) => a - b);

    const times: number[] = [];
    const cpuBefore = cpuMs(server.pid);
    const end = performance.now() + DURATION_MS;
    await Promise.all(
      passkeys.map(async (passkey) => {
        while (performance.now() < end) times.push(await ceremony(origin, passkey));
      }),
    );
    const cpu = cpuMs(server.pid) - cpuBefore;
    times.sort((a, b) => a - b);
    console.log(
      `passkeys.alone: one ceremony at a time (options + verification) p50 ${ms(quantile(alone, 0.5))} p90 ${ms(quantile(alone, 0.9))}`,
    );
    console.log(
      `passkeys.concurrent: ${CONCURRENCY} concurrent ceremonies for ${DURATION_MS / 1000} s: ${times.length} sign-ins ` +
        `(${(times.length / (DURATION_MS / 1000)).toFixed(0)}/s); round trip p50 ${ms(quantile(times, 0.5))} p90 ${ms(quantile(times, 0.9))} ` +
        `p99 ${ms(quantile(times, 0.99))}; server CPU ${ms(cpu / times.length)} per ceremony`,
    );
  } finally {
    await server.stop();
  }
}
