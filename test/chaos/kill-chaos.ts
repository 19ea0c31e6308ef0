import { Database } from 'bun:sqlite';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { eventually } from '../helpers/eventually.ts';
import { blobFiles } from '../helpers/files.ts';
import { parseJson, runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/server.ts';
import { ServerProcess } from '../helpers/server-process.ts';
import { Rng } from './random.ts';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

export interface KillChaosOptions {
  /** How many times the server is killed with SIGKILL mid-workload. */
  kills: number;
  /** Operations started per round (the kill comes somewhere in the round). */
  opsPerRound: number;
  seed: number;
  /** Operations in flight at once. */
  concurrency?: number;
  /** Run the built executable instead of the source. */
  binary?: string;
  log?: (line: string) => void;
}

export interface KillChaosSummary {
  seed: number;
  kills: number;
  /** Operations answered (any status) and started in all. */
  operations: number;
  started: number;
  acknowledgedUploads: number;
  /** Files whose bytes were compared at the end (uploads and copies that must exist). */
  verifiedFiles: number;
  mismatches: number;
  lostUploads: number;
  /** Jobs that never finished, and due jobs still pending in the database at the end. */
  stuckJobs: number;
  jobsFinished: number;
  /** Stored objects no row points at, and temp files, after the final restart. */
  leftoverObjects: number;
  leftoverTemp: number;
  doctorOk: boolean;
  problems: string[];
}

interface Known {
  id: string;
  sha: string;
  size: number;
  /** Keepers are never trashed: they must exist at the end. Scratch files may be trashed and deleted. */
  keeper: boolean;
}

/**
 * A bounded mixed workload (uploads small and large, bulk uploads, folders, renames, moves, copies,
 * trash, restore, permanent delete, empty trash) against a server killed with SIGKILL at random points
 * while operations are in flight, restarted each time. At the end: every acknowledged upload and copy
 * that must exist is downloaded and compared byte for byte, every job has finished, no stored object
 * is left without a row, and `coffer doctor` finds the database sound.
 */
export async function runKillChaos(opts: KillChaosOptions): Promise<KillChaosSummary> {
  const rng = new Rng(opts.seed);
  const log = opts.log ?? (() => {});
  const dataDir = tempDir('coffer-chaos-');
  const server = new ServerProcess(dataDir, opts.binary);
  const concurrency = opts.concurrency ?? 4;
  const problems: string[] = [];
  const known = new Map<string, Known>();
  const keeperFolders: string[] = [];
  const scratchFolders: string[] = [];
  const trashed = new Set<string>();
  /** Scratch items (and everything that may sit under them) a permanent delete or empty trash may remove. */
  const mayBeDeleted = new Set<string>();
  const scratchParent = new Map<string, string | null>();
  const jobs = new Set<string>();
  const copyJobs = new Map<string, string>();
  /** Empty-trash jobs not seen finished (null: one whose answer the kill swallowed); the model treats what is trashed meanwhile as deletable too. */
  const pendingEmpties = new Set<string | null>();
  let emptiesInFlight = 0;
  let cookie = '';
  let operations = 0;
  let started = 0;
  let acknowledgedUploads = 0;

  const call = async (method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> => {
    const init: RequestInit = { method, headers: { cookie, ...headers } };
    if (body instanceof FormData) init.body = body;
    else if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    return fetch(server.url + p, init);
  };
  const answer = async (res: Response) => (res.headers.get('content-type')?.includes('json') ? res.json() : res.text());

  const scratchIds = () =>
    [...known.values()]
      .filter((k) => !k.keeper)
      .map((k) => k.id)
      .concat(scratchFolders);

  const ops = {
    async upload() {
      const keeper = rng.chance(0.5);
      const size = rng.chance(0.15) ? rng.int(1, 6) * 1024 * 1024 : rng.int(0, 200_000);
      const content = randomBytes(size);
      const parent = keeper
        ? keeperFolders.length && rng.chance(0.6)
          ? rng.pick(keeperFolders)
          : null
        : scratchFolders.length
          ? rng.pick(scratchFolders)
          : null;
      const form = new FormData();
      if (parent) form.append('parentId', parent);
      form.append('file', new File([content], `f-${rng.int(0, 1e9)}.bin`));
      const res = await call('POST', '/api/files/upload', form);
      if (res.status !== 200) return res;
      const item = (await answer(res)) as { id: string };
      acknowledgedUploads++;
      known.set(item.id, { id: item.id, sha: sha(content), size, keeper });
      if (!keeper) recordScratch(item.id, parent);
      return res;
    },
    async bulk() {
      const keeper = rng.chance(0.5);
      const form = new FormData();
      const contents = new Map<string, Uint8Array>();
      const n = rng.int(2, 6);
      const dir = `bulk-${rng.int(0, 1e9)}`;
      for (let i = 0; i < n; i++) {
        const name = `b-${i}-${rng.int(0, 1e9)}.bin`;
        const content = randomBytes(rng.int(0, 100_000));
        contents.set(name, content);
        form.append('relativePaths', `${dir}/${name}`);
        form.append('files', new File([content], name));
      }
      if (!keeper && scratchFolders.length) form.append('parentId', rng.pick(scratchFolders));
      const res = await call('POST', '/api/files/upload/bulk', form);
      if (res.status !== 200) return res;
      const result = (await answer(res)) as { files: Array<{ id: string; name: string; parentId: string }> };
      for (const f of result.files) {
        const content = contents.get(f.name)!;
        acknowledgedUploads++;
        known.set(f.id, { id: f.id, sha: sha(content), size: content.length, keeper });
        if (!keeper) recordScratch(f.id, f.parentId);
      }
      const created = result.files[0]?.parentId;
      if (created) {
        (keeper ? keeperFolders : scratchFolders).push(created);
        if (!keeper) recordScratch(created, form.get('parentId') as string | null);
      }
      return res;
    },
    async folder() {
      const keeper = rng.chance(0.5);
      const res = await call('POST', '/api/files/folder', { name: `d-${rng.int(0, 1e9)}` });
      if (res.status !== 200) return res;
      const { id } = (await answer(res)) as { id: string };
      (keeper ? keeperFolders : scratchFolders).push(id);
      if (!keeper) recordScratch(id, null);
      return res;
    },
    async rename() {
      const ids = [...known.keys()];
      if (!ids.length) return null;
      return call('POST', '/api/files/rename', { id: rng.pick(ids), name: `r-${rng.int(0, 1e9)}.bin` });
    },
    async move() {
      // Keepers move between keeper folders; scratch items stay under scratch (or the root).
      const keepers = [...known.values()].filter((k) => k.keeper);
      if (!keepers.length || !keeperFolders.length) return null;
      return call('POST', '/api/files/move', { ids: [rng.pick(keepers).id], parentId: rng.chance(0.2) ? null : rng.pick(keeperFolders) });
    },
    async copy() {
      const keepers = [...known.values()].filter((k) => k.keeper);
      if (!keepers.length) return null;
      const source = rng.pick(keepers);
      const res = await call('POST', '/api/files/copy', {
        ids: [source.id],
        parentId: keeperFolders.length ? rng.pick(keeperFolders) : null,
      });
      if (res.status === 202) {
        const { jobId } = (await answer(res)) as { jobId: string };
        jobs.add(jobId);
        copyJobs.set(jobId, source.id);
      }
      return res;
    },
    async trash() {
      const ids = scratchIds().filter((id) => !trashed.has(id));
      if (!ids.length) return null;
      const pickIds = [rng.pick(ids)];
      const emptyMayFollow = await emptyStillPending();
      for (const id of pickIds) {
        trashed.add(id);
        if (emptyMayFollow) markDeletable(id);
      }
      const res = await call('POST', '/api/files/delete', { ids: pickIds });
      if (res.status === 202) jobs.add(((await answer(res)) as { jobId: string }).jobId);
      return res;
    },
    async restore() {
      const ids = [...trashed];
      if (!ids.length) return null;
      const id = rng.pick(ids);
      const res = await call('POST', '/api/files/trash/restore', { ids: [id] });
      if (res.status === 200) trashed.delete(id);
      return res;
    },
    async purge() {
      const ids = [...trashed];
      if (!ids.length) return null;
      const id = rng.pick(ids);
      // Sent: from now on it and whatever was under it may be gone.
      markDeletable(id);
      const res = await call('POST', '/api/files/trash/delete', { ids: [id] });
      if (res.status === 202) jobs.add(((await answer(res)) as { jobId: string }).jobId);
      return res;
    },
    async empty() {
      for (const id of trashed) markDeletable(id);
      emptiesInFlight++;
      const res = await call('POST', '/api/files/trash/empty')
        .catch((err: unknown) => {
          pendingEmpties.add(null);
          throw err;
        })
        .finally(() => emptiesInFlight--);
      if (res.status === 202) {
        const { jobId } = (await answer(res)) as { jobId: string };
        jobs.add(jobId);
        pendingEmpties.add(jobId);
      }
      return res;
    },
  };

  /** Whether an empty-trash job may still run (and so remove what is trashed now). */
  async function emptyStillPending(): Promise<boolean> {
    // A trash sent beside an unanswered empty may reach the server first and be emptied with it.
    if (emptiesInFlight > 0) return true;
    for (const id of pendingEmpties) {
      if (id === null) return true;
      const res = await call('GET', `/api/files/jobs/${id}`).catch(() => null);
      if (res?.status === 200) pendingEmpties.delete(id);
      else return true;
    }
    return false;
  }

  /**
   * A scratch item acknowledged under `parent`. Its answer can arrive after a purge or empty of that parent was sent
   * (another lane's request, answered first): it may then go with its parent, as the items known at that time do.
   */
  function recordScratch(id: string, parent: string | null): void {
    scratchParent.set(id, parent);
    if (parent !== null && mayBeDeleted.has(parent)) markDeletable(id);
  }

  function markDeletable(id: string): void {
    mayBeDeleted.add(id);
    // Whatever was under a scratch folder goes with it (scratch items are never moved).
    for (let grew = true; grew; ) {
      grew = false;
      for (const [child, parent] of scratchParent) {
        if (parent !== null && mayBeDeleted.has(parent) && !mayBeDeleted.has(child)) {
          mayBeDeleted.add(child);
          grew = true;
        }
      }
    }
  }

  const weights = { upload: 30, bulk: 8, folder: 8, rename: 6, move: 10, copy: 10, trash: 10, restore: 6, purge: 6, empty: 2 } as const;

  /** Runs operations until `count` were started or the server died; returns how many were answered. */
  async function round(count: number, killAfter: number): Promise<void> {
    let next = 0;
    let answered = 0;
    let killing: Promise<void> | null = null;
    const lane = async () => {
      while (next < count && !killing) {
        next++;
        started++;
        const op = rng.weighted(weights);
        try {
          const res = await ops[op]();
          if (res) {
            if (res.status >= 500) problems.push(`${op} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
            else if (!res.bodyUsed) await res.arrayBuffer();
          }
          operations++;
        } catch {
          // The server was killed under this request: it was not acknowledged.
        }
        if (++answered >= killAfter && !killing) killing = server.kill();
      }
    };
    await Promise.all(Array.from({ length: concurrency }, lane));
    await killing;
  }

  await server.start();
  const signup = await fetch(`${server.url}/api/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'chaos@example.test', password: 'chaos password', name: 'Chaos' }),
  });
  cookie = /token=[^;]+/.exec(signup.headers.get('set-cookie') ?? '')![0];

  for (let k = 0; k < opts.kills; k++) {
    const killAfter = rng.int(Math.ceil(opts.opsPerRound * 0.3), opts.opsPerRound);
    await round(opts.opsPerRound, killAfter);
    log(`round ${k + 1}: killed after ${killAfter} answers; ${known.size} files known, ${jobs.size} jobs`);
    await server.start();
  }

  // The final run: every job (including those the kills interrupted) must finish; those that do not are counted as stuck.
  const finished = new Map<string, { status: string; result?: { ids?: string[] } }>();
  await eventually(
    async () => {
      for (const id of jobs) {
        if (finished.has(id)) continue;
        const res = await call('GET', `/api/files/jobs/${id}`);
        if (res.status === 200) finished.set(id, (await res.json()) as { status: string });
        else if (res.status === 500) finished.set(id, { status: 'failed' });
        else await res.arrayBuffer();
      }
      return finished.size === jobs.size;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  ).catch(() => {});
  let stuckJobs = jobs.size - finished.size;
  for (const [id, j] of finished) if (j.status === 'failed') problems.push(`job ${id} failed`);

  // Copies of keepers are keepers with their source's bytes.
  for (const [jobId, sourceId] of copyJobs) {
    const copyId = finished.get(jobId)?.result?.ids?.[0];
    const source = known.get(sourceId);
    if (copyId && source) known.set(copyId, { ...source, id: copyId });
  }

  // Everything still in the trash comes back, so every surviving file can be read through the API.
  for (;;) {
    const res = await call('GET', '/api/files/trash?limit=500');
    const roots = (await res.json()) as Array<{ id: string }>;
    if (!roots.length) break;
    const restore = await call('POST', '/api/files/trash/restore', { ids: roots.map((r) => r.id) });
    const body = (await answer(restore)) as { jobId?: string };
    // A restore that does not finish is sent again on the next turn.
    if (restore.status === 202)
      await eventually(async () => (await call('GET', `/api/files/jobs/${body.jobId}`)).status !== 202, {
        timeoutMs: 60_000,
        intervalMs: 100,
      }).catch(() => {});
  }

  let mismatches = 0;
  let lostUploads = 0;
  let verifiedFiles = 0;
  for (const k of known.values()) {
    const res = await call('GET', `/api/files/${k.id}/download`);
    if (res.status === 404) {
      await res.arrayBuffer();
      if (k.keeper || !mayBeDeleted.has(k.id)) {
        lostUploads++;
        problems.push(`acknowledged ${k.keeper ? 'keeper' : 'scratch'} file ${k.id} is gone`);
      }
      continue;
    }
    const bytes = new Uint8Array(await res.arrayBuffer());
    verifiedFiles++;
    if (res.status !== 200 || bytes.length !== k.size || sha(bytes) !== k.sha) {
      mismatches++;
      problems.push(
        `file ${k.id}: status ${res.status}, ${bytes.length} of ${k.size} bytes, ${sha(bytes) === k.sha ? 'same' : 'different'} content`,
      );
    }
  }

  // Let queued object deletions run (what is still due after 10 s counts as stuck), then stop cleanly and look at what is on disk.
  await eventually(() => pendingDueJobs(dataDir) === 0, { timeoutMs: 10_000, intervalMs: 100 }).catch(() => {});
  await server.stop();
  stuckJobs += pendingDueJobs(dataDir);
  const db = new Database(path.join(dataDir, 'coffer.db'), { readonly: true });
  const referenced = new Set(
    db
      .query<{ k: string }, []>('SELECT storage_key AS k FROM items WHERE storage_key IS NOT NULL')
      .all()
      .map((r) => r.k),
  );
  db.close();
  const { objects, temp } = blobFiles(dataDir);
  const leftover = objects.filter((o) => !referenced.has(o));
  for (const o of leftover) problems.push(`object ${o} has no row`);
  const doctor = await runCli(['doctor', '--json', '--data-dir', dataDir], { env: { COFFER_MIN_FREE_BYTES: '16M' } });
  const report = parseJson(doctor);
  const doctorOk = report.database.integrity === 'ok' && report.usage.mismatches.length === 0 && report.missingObjects.count === 0;
  if (!doctorOk) problems.push(`doctor: ${doctor.stdout.slice(0, 500)}`);
  fs.rmSync(dataDir, { recursive: true, force: true });

  return {
    seed: opts.seed,
    kills: opts.kills,
    operations,
    started,
    acknowledgedUploads,
    verifiedFiles,
    mismatches,
    lostUploads,
    stuckJobs,
    jobsFinished: finished.size,
    leftoverObjects: leftover.length,
    leftoverTemp: temp.length,
    doctorOk,
    problems,
  };
}

/** Jobs waiting or running that are already due (future retries and schedules excluded). */
function pendingDueJobs(dataDir: string): number {
  const db = new Database(path.join(dataDir, 'coffer.db'), { readonly: true });
  try {
    return db
      .query<{ n: number }, [number]>(`SELECT COUNT(*) AS n FROM jobs WHERE status IN ('created', 'active') AND run_at <= ?`)
      .get(Date.now())!.n;
  } finally {
    db.close();
  }
}
