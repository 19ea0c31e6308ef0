import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { streamRequest } from '../test/helpers/raw-http.ts';
import { mountSmallDisk } from '../test/helpers/small-disk.ts';
import { appRoutes, prepareTarget, resetSettings, runFuzz } from '../test/chaos/fuzz.ts';
import { runKillChaos } from '../test/chaos/kill-chaos.ts';
import { chaosSeed } from '../test/chaos/random.ts';
import { memoryMiB } from './fixtures.ts';
import { adminToken, startBenchServer } from './server.ts';

const MiB = 1024 * 1024;

/** 10 kills of the mixed workload (the chaos runner of test/chaos, with more kills and operations). */
async function kills(): Promise<void> {
  const seed = chaosSeed();
  const s = await runKillChaos({ kills: 10, opsPerRound: 150, seed });
  console.log(
    `reliability.kill9 kills ${s.kills} operations ${s.operations} acknowledged_uploads ${s.acknowledgedUploads} verified_files ${s.verifiedFiles} ` +
      `mismatches ${s.mismatches} lost_uploads ${s.lostUploads} stuck_jobs ${s.stuckJobs} (jobs finished ${s.jobsFinished}) ` +
      `objects_left ${s.leftoverObjects} temp_left ${s.leftoverTemp} doctor_ok ${s.doctorOk} (seed ${seed}; goal 0 0 0 0)`,
  );
  for (const p of s.problems.slice(0, 10)) console.log(`  problem: ${p}`);
}

/** 20,000 fuzz requests against the server in its own process; its memory before, at peak and after. */
async function fuzz(): Promise<void> {
  const server = await startBenchServer({ COFFER_GENERAL_RATE_LIMIT: '1000000000', LOG_LEVEL: 'warn' });
  try {
    const target = await prepareTarget(server.url, appRoutes());
    const before = memoryMiB(server.pid);
    const seed = chaosSeed();
    const t0 = performance.now();
    const r = await runFuzz(target, {
      requests: 20_000,
      seed,
      every: { n: 250, run: () => resetSettings(server.url, target.admin.cookie) },
    });
    const seconds = (performance.now() - t0) / 1000;
    const alive = (await fetch(`${server.url}/health`)).status === 200;
    await Bun.sleep(5000);
    const after = memoryMiB(server.pid);
    const fiveHundreds = Object.entries(r.byStatus).filter(([s]) => Number(s) >= 500);
    console.log(
      `reliability.fuzz requests ${r.requests} unexpected_5xx ${r.unexpected.length} alive ${alive} rss_before_MiB ${before.now.toFixed(0)} ` +
        `peak_rss_MiB ${after.peak.toFixed(0)} rss_after_MiB ${after.now.toFixed(0)} (5 s after; goal < 150) seconds ${seconds.toFixed(1)} (seed ${seed})`,
    );
    console.log(
      `  statuses ${JSON.stringify(r.byStatus)}; 5xx seen: ${JSON.stringify(Object.fromEntries(fiveHundreds))} (502: update feed unset; 505: HTTP/0.9, HTTP/2.0 or broken request lines, answered by the runtime)`,
    );
    for (const u of r.unexpected.slice(0, 10)) console.log(`  unexpected ${u.status}: ${u.request}`);
  } finally {
    await server.stop();
  }
}

/** 20,000 text fields of 64 KiB (1.25 GB) to /upload/bulk: where the server stops, and its peak memory. */
async function formFields(): Promise<void> {
  const server = await startBenchServer({ LOG_LEVEL: 'warn' });
  try {
    const token = await adminToken(server.url);
    const before = memoryMiB(server.pid);
    const field = Buffer.from(`--b\r\nContent-Disposition: form-data; name="relativePaths"\r\n\r\n${'x'.repeat(64 * 1024)}\r\n`);
    let left = 20_000;
    const r = await streamRequest(
      server.url,
      `POST /api/files/upload/bulk HTTP/1.1\r\nHost: localhost\r\nCookie: token=${token}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${20_000 * field.length + 5}\r\n\r\n`,
      () => (left-- > 0 ? field : null),
    );
    await Bun.sleep(5000);
    const after = memoryMiB(server.pid);
    console.log(
      `reliability.form_fields offered_MB ${((20_000 * field.length) / 1e6).toFixed(0)} status ${r.status} answered_after_MiB ${(r.answeredAt / MiB).toFixed(1)} ` +
        `sent_before_close_MiB ${(r.sent / MiB).toFixed(1)}${r.status ? '' : ' (status 0: the reset of the closed connection reached the client before the answer did)'} rss_before_MiB ${before.now.toFixed(0)} peak_rss_MiB ${after.peak.toFixed(0)} (goal < 200) rss_after_MiB ${after.now.toFixed(0)} (5 s after)`,
    );
  } finally {
    await server.stop();
  }
}

/** A 64 MiB tmpfs filled by uploads: the refusal, then empty trash through the API, then uploads again. */
async function fullDisk(): Promise<void> {
  const disk = mountSmallDisk(64);
  if (typeof disk === 'string') {
    console.log(`reliability.full_disk skipped: ${disk}`);
    return;
  }
  const server = await startBenchServer({ LOG_LEVEL: 'warn', COFFER_MIN_FREE_BYTES: '8M' }, path.join(disk.dir, 'data'));
  try {
    const cookie = `token=${await adminToken(server.url)}`;
    const upload = (name: string) => {
      const form = new FormData();
      form.append('file', new File([randomBytes(4 * MiB)], name));
      return fetch(`${server.url}/api/files/upload`, { method: 'POST', headers: { cookie }, body: form });
    };
    const ids: string[] = [];
    let refusal: Response | null = null;
    while (!refusal && ids.length < 40) {
      const res = await upload(`fill-${ids.length}.bin`);
      if (res.status === 200) ids.push(((await res.json()) as { id: string }).id);
      else refusal = res;
    }
    const refusalBody = (await refusal!.json()) as { message: string };
    const call = (p: string, body?: unknown) =>
      fetch(server.url + p, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const trash = (await call('/api/files/delete', { ids })).status;
    const { jobId } = (await (await call('/api/files/trash/empty')).json()) as { jobId: string };
    let job: { status: string; result?: { count: number } } = { status: 'created' };
    for (let i = 0; i < 200 && job.status !== 'completed'; i++) {
      const res = await fetch(`${server.url}/api/files/jobs/${jobId}`, { headers: { cookie } });
      job = (await res.json()) as typeof job;
      if (job.status !== 'completed') await Bun.sleep(50);
    }
    await Bun.sleep(1000);
    const again = (await upload('after.bin')).status;
    console.log(
      `reliability.full_disk uploads_accepted ${ids.length} (4 MiB each) refusal ${refusal!.status} trash ${trash} empty_trash ${job.status} (${job.result?.count ?? '?'} items) ` +
        `upload_after ${again} (goal 507, completed, 200)`,
    );
    console.log(`  507 message: ${refusalBody.message}`);
  } finally {
    await server.stop();
    disk.unmount();
  }
}

/** The figures of issue 13, each measured as its part says. `RELIABILITY_PARTS=fuzz,form` for some. */
export async function runReliabilityBench(): Promise<void> {
  const parts: Record<string, () => Promise<void>> = { kills, fuzz, form: formFields, disk: fullDisk };
  const wanted = process.env.RELIABILITY_PARTS?.split(',') ?? Object.keys(parts);
  for (const name of wanted) await parts[name]!();
}

if (import.meta.main) await runReliabilityBench();
