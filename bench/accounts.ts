import { adminToken, startBenchServer, wrk } from './server.ts';

/** Authenticated GET /api/profile under wrk, and login latency (argon2id verify). */
export async function runAccountsBench(): Promise<void> {
  // The general limiter (10 000 per 15 minutes per login) is raised so it does not cut the run short.
  const server = await startBenchServer({ COFFER_GENERAL_RATE_LIMIT: '100000000' });
  try {
    const token = await adminToken(server.url);
    const r = wrk(`${server.url}/api/profile`, { threads: 2, connections: 4, seconds: 10, headers: { authorization: `Bearer ${token}` } });
    if (r.non2xx) throw new Error(`${r.non2xx} non-2xx responses during the profile run`);
    console.log(`accounts.profile_req_s ${r.requestsPerSec.toFixed(0)} p50 ${r.p50} p99 ${r.p99} (wrk -t2 -c4 -d10s, goal >= 8000 req/s)`);
    const r32 = wrk(`${server.url}/api/profile`, {
      threads: 2,
      connections: 32,
      seconds: 10,
      headers: { authorization: `Bearer ${token}` },
    });
    if (r32.non2xx) throw new Error(`${r32.non2xx} non-2xx responses during the profile run at -c32`);
    console.log(
      `accounts.profile_c32_req_s ${r32.requestsPerSec.toFixed(0)} p50 ${r32.p50} p99 ${r32.p99} (wrk -t2 -c32 -d10s, from source; the built executable's figure: npm run bench -- requests; goal >= 25000 req/s)`,
    );

    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      const res = await fetch(`${server.url}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'bench@example.test', password: 'bench password' }),
      });
      if (!res.ok) throw new Error(`login failed: ${res.status}`);
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    console.log(
      `accounts.login_p50_ms ${times[10]!.toFixed(1)} p90 ${times[18]!.toFixed(1)} (20 logins, argon2id m=19 MiB t=4, goal 50-300 ms)`,
    );
  } finally {
    await server.stop();
  }
}

if (import.meta.main) await runAccountsBench();
