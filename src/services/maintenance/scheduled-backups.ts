import fs from 'node:fs';
import path from 'node:path';
import { type BackupConfig, type BackupSchedule, secretText } from '../../config.ts';
import type { Clock } from '../../clock.ts';
import type { DataPaths } from '../../data-dir.ts';
import type { BackupRun, BackupRunsRepo } from '../../db/repos/backups.ts';
import { AppError } from '../../errors.ts';
import { Jobs } from '../../jobs/catalog.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { Schedules } from '../../jobs/schedules.ts';
import type { Lifecycle } from '../../lib/lifecycle.ts';
import { Counter, Gauge } from '../../lib/metrics.ts';
import type { Logger } from '../../log.ts';
import { S3Driver } from '../../storage/s3.ts';
import type { MetricsService } from '../admin/metrics.ts';
import { archiveDiskFull, type BackupService, removeStaleBackupSnapshots } from './backup.ts';
import type { BackupRunView, BackupStatus } from '../../contract/admin.ts';

const HOUR = 3_600_000;
const INTERVAL_MS = { hourly: HOUR, daily: 24 * HOUR, weekly: 7 * 24 * HOUR } as const;
const SCHEDULE_NAME = '__backup__';
const STOPPED = 'stopped by a server shutdown; it starts over when the server is back';
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
/** Archive names: sortable by time, and valid storage keys (so the same name works in a bucket). */
const ARCHIVE_NAME = /^coffer-backup-\d{8}T\d{6}\d{3}Z(\.tar(\.enc)?)?$/;

/** The first scheduled time after `after` (server-local time); null when backups are off. */
export function nextOccurrence(schedule: BackupSchedule, after: number): number | null {
  const d = new Date(after);
  switch (schedule.kind) {
    case 'off':
      return null;
    case 'hourly':
      d.setMinutes(0, 0, 0);
      d.setHours(d.getHours() + 1);
      return d.getTime();
    case 'daily':
      d.setHours(schedule.hour, schedule.minute, 0, 0);
      if (d.getTime() <= after) d.setDate(d.getDate() + 1);
      return d.getTime();
    case 'weekly':
      d.setHours(schedule.hour, schedule.minute, 0, 0);
      d.setDate(d.getDate() + ((schedule.day - d.getDay() + 7) % 7));
      if (d.getTime() <= after) d.setDate(d.getDate() + 7);
      return d.getTime();
  }
}

function describeSchedule(schedule: BackupSchedule): string {
  const hhmm = (s: { hour: number; minute: number }) => `${String(s.hour).padStart(2, '0')}:${String(s.minute).padStart(2, '0')}`;
  if (schedule.kind === 'off') return 'off';
  if (schedule.kind === 'hourly') return 'every hour';
  if (schedule.kind === 'daily') return `every day at ${hhmm(schedule)}`;
  return `every ${WEEKDAYS[schedule.day]} at ${hhmm(schedule)}`;
}

function archiveName(at: number, encrypted: boolean, inBucket: boolean): string {
  const stamp = new Date(at).toISOString().replace(/[-:.]/g, '');
  const base = `coffer-backup-${stamp}`;
  return inBucket ? base : `${base}.tar${encrypted ? '.enc' : ''}`;
}

interface Deps {
  config: BackupConfig;
  backup: BackupService;
  runs: BackupRunsRepo;
  clock: Clock;
  queue: JobQueue;
  schedules: Schedules;
  metrics: MetricsService;
  log: Logger;
  paths: DataPaths;
  /** The bucket client's staging directory (unused by backups, which stream straight to the bucket). */
  stagingDir: string;
}

/**
 * Backups that run themselves: a durable schedule row enqueues `backup.run`; each run writes a full archive
 * (encrypted with BACKUP_PASSPHRASE_FILE) to BACKUP_DIR or the bucket, records itself in `backup_runs`, and
 * only after success deletes archives beyond BACKUP_KEEP. One runs at a time.
 */
export class ScheduledBackupService {
  private current: Promise<unknown> | null = null;
  /** The last "Back up now" job, so a second click while it waits is refused. */
  private requested: string | null = null;
  private readonly failures: Counter;
  private readonly failureListeners: Array<(run: { id: string; trigger: BackupRun['trigger']; error: string }) => void> = [];

  constructor(private readonly deps: Deps) {
    const { registry } = deps.metrics;
    const { runs } = deps;
    registry.register(
      new Gauge(
        'coffer_backup_last_success_timestamp_seconds',
        'When the last backup run succeeded, in seconds since the Unix epoch (0: never).',
        (g) => g.set(Math.floor((runs.latestWith('succeeded')?.finishedAt ?? 0) / 1000)),
      ),
    );
    registry.register(
      new Gauge('coffer_backup_duration_seconds', 'How long the last finished backup run took, in seconds (0: none yet).', (g) => {
        const last = runs.latest();
        g.set(last?.finishedAt ? (last.finishedAt - last.startedAt) / 1000 : 0);
      }),
    );
    this.failures = registry.register(new Counter('coffer_backup_failures_total', 'Backup runs that failed since the server started.'));
    this.failures.inc({}, 0);
  }

  private get interval(): number | null {
    const { schedule } = this.deps.config;
    return schedule.kind === 'off' ? null : INTERVAL_MS[schedule.kind];
  }

  /** The passphrase from BACKUP_PASSPHRASE_FILE, or null when backups are not encrypted. */
  passphrase(): string | null {
    const file = this.deps.config.passphraseFile;
    return file ? secretText({ source: 'file', path: file }, 'BACKUP_PASSPHRASE_FILE') : null;
  }

  private destinationText(): string {
    const d = this.deps.config.destination;
    return d.kind === 'dir' ? d.dir : `s3://${d.s3.bucket}/${d.s3.prefix}`;
  }

  /** Server start: a run a restart cut short is failed (its job runs again), partial archives go, the schedule is aligned. */
  lifecycle(): Lifecycle {
    return {
      name: 'scheduled backups',
      start: () => {
        const { config, runs, clock, schedules } = this.deps;
        if (config.passphraseFile) this.passphrase();
        runs.failInterrupted(clock.now(), 'interrupted by a restart; the backup started over');
        removeStaleBackupSnapshots(this.deps.paths);
        if (config.destination.kind === 'dir' && fs.existsSync(config.destination.dir)) {
          for (const name of fs.readdirSync(config.destination.dir)) {
            if (name.startsWith('coffer-backup-') && name.includes('.partial-'))
              fs.rmSync(path.join(config.destination.dir, name), { force: true });
          }
        }
        const interval = this.interval;
        if (interval === null) {
          schedules.remove(SCHEDULE_NAME);
          return;
        }
        const existing = schedules.get(SCHEDULE_NAME);
        const aligned =
          existing && existing.intervalMs === interval && nextOccurrence(config.schedule, existing.nextRunAt - 1) === existing.nextRunAt;
        if (aligned) return;
        schedules.remove(SCHEDULE_NAME);
        schedules.ensure(SCHEDULE_NAME, {
          job: Jobs.backupRun,
          intervalMs: interval,
          payload: { trigger: 'scheduled' },
          firstRunAt: nextOccurrence(config.schedule, clock.now())!,
        });
      },
      stop: async () => {
        await this.current?.catch(() => {});
      },
    };
  }

  /** `listener` runs when a run fails (not when a shutdown stops it). */
  onFailure(listener: (run: { id: string; trigger: BackupRun['trigger']; error: string }) => void): void {
    this.failureListeners.push(listener);
  }

  /** "Back up now": queued as a job; refused while one is queued or running. */
  requestNow(): { jobId: string } {
    const { queue, runs } = this.deps;
    const queued = this.requested ? queue.get(this.requested) : null;
    if (this.current || runs.latest()?.status === 'running' || (queued && (queued.status === 'created' || queued.status === 'active'))) {
      throw new AppError(409, 'A backup is already running: wait for it to finish');
    }
    this.requested = queue.enqueue(Jobs.backupRun, { trigger: 'manual' });
    return { jobId: this.requested };
  }

  /** One run, after any run in progress; a shutdown (`signal`) stops it, and its job runs again after the restart. */
  run(trigger: BackupRun['trigger'], signal?: AbortSignal): Promise<BackupRun> {
    const previous = this.current ?? Promise.resolve();
    const next = previous.catch(() => {}).then(() => this.runNow(trigger, signal));
    this.current = next;
    return next.finally(() => {
      if (this.current === next) this.current = null;
    });
  }

  private async runNow(trigger: BackupRun['trigger'], signal: AbortSignal | undefined): Promise<BackupRun> {
    const { runs, clock, config, backup, log } = this.deps;
    const id = crypto.randomUUID();
    const startedAt = clock.now();
    runs.start({ id, trigger, startedAt });
    try {
      const passphrase = this.passphrase();
      const name = archiveName(startedAt, passphrase !== null, config.destination.kind === 's3');
      let archive: string;
      let bytes: number;
      if (config.destination.kind === 'dir') {
        fs.mkdirSync(config.destination.dir, { recursive: true, mode: 0o700 });
        const dir = config.destination.dir;
        const written = await backup.createFull(path.join(dir, name), { passphrase, actor: 'system', signal }).catch((err: unknown) => {
          // Where the admin reads it (Admin → Backups), the disk is named with what to do, not as ENOSPC.
          throw (err as NodeJS.ErrnoException).code === 'ENOSPC' ? archiveDiskFull(dir, 0) : err;
        });
        archive = written.file;
        bytes = written.bytes;
      } else {
        const bucket = this.bucket();
        const written = backup.fullArchive({ passphrase, signal });
        try {
          ({ size: bytes } = await bucket.put(name, written.body, { signal }));
        } finally {
          await written.close();
        }
        archive = `s3://${config.destination.s3.bucket}/${config.destination.s3.prefix}${name}`;
        backup.recordFull(archive, bytes, written.result().manifest, true, 'system');
      }
      // The archive is written: a rotation that fails (the bucket refusing a delete) is retried by the next run, not this one's failure.
      await this.rotate(name).catch((err: unknown) =>
        log.warn('backup written, older archives not removed', { archive, error: err instanceof Error ? err.message : String(err) }),
      );
      const finishedAt = clock.now();
      runs.finish(id, { status: 'succeeded', finishedAt, bytes, archive, error: null });
      log.info('backup written', { archive, bytes, seconds: (finishedAt - startedAt) / 1000 });
    } catch (err) {
      if (signal?.aborted) {
        runs.finish(id, { status: 'failed', finishedAt: clock.now(), bytes: null, archive: null, error: STOPPED });
        throw err;
      }
      const error = err instanceof Error ? err.message : String(err);
      runs.finish(id, { status: 'failed', finishedAt: clock.now(), bytes: null, archive: null, error });
      this.failures.inc();
      log.error('backup failed', { error });
      for (const listener of this.failureListeners) listener({ id, trigger, error });
    }
    return runs.latest()!;
  }

  private bucket(): S3Driver {
    const d = this.deps.config.destination;
    if (d.kind !== 's3') throw new Error('not a bucket destination');
    return new S3Driver({
      ...d.s3,
      stagingDir: this.deps.stagingDir,
      secretAccessKey: secretText(d.s3.secretAccessKey, 'BACKUP_S3_SECRET_ACCESS_KEY_FILE'),
    });
  }

  /**
   * Deletes archives beyond BACKUP_KEEP, oldest first; only archives this service names. Oldest by the order the
   * runs were made in, `written` (this run's) newest: the time in a name is the clock's, which may have been set
   * back since. Archives no run recorded (copied in, from before runs were recorded) are older, by name.
   */
  private async rotate(written: string): Promise<void> {
    const { config, runs } = this.deps;
    const made = runs.archives().map((a) => a.slice(a.lastIndexOf('/') + 1));
    const rank = (name: string) => (name === written ? made.length : made.lastIndexOf(name));
    const oldestFirst = (names: string[]) => names.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
    if (config.destination.kind === 'dir') {
      const dir = config.destination.dir;
      const names = oldestFirst(fs.readdirSync(dir).filter((n) => ARCHIVE_NAME.test(n)));
      for (const name of names.slice(0, Math.max(0, names.length - config.keep))) fs.rmSync(path.join(dir, name), { force: true });
      return;
    }
    const bucket = this.bucket();
    const keys: string[] = [];
    for await (const o of bucket.list()) if (ARCHIVE_NAME.test(o.key)) keys.push(o.key);
    for (const key of oldestFirst(keys).slice(0, Math.max(0, keys.length - config.keep))) await bucket.delete(key);
  }

  status(): BackupStatus {
    const { runs, config, clock, schedules } = this.deps;
    const view = (r: BackupRun | null): BackupRunView | null =>
      r && {
        trigger: r.trigger,
        status: r.status,
        startedAt: new Date(r.startedAt).toISOString(),
        finishedAt: r.finishedAt ? new Date(r.finishedAt).toISOString() : null,
        durationSeconds: r.finishedAt ? (r.finishedAt - r.startedAt) / 1000 : null,
        bytes: r.bytes,
        archive: r.archive,
        error: r.error,
      };
    const last = runs.latest();
    const success = runs.latestWith('succeeded');
    const next = schedules.get(SCHEDULE_NAME);
    return {
      schedule: describeSchedule(config.schedule),
      destination: this.destinationText(),
      encrypted: config.passphraseFile !== null,
      keep: config.keep,
      running: last?.status === 'running',
      lastRun: view(last),
      lastSuccessAt: success?.finishedAt ? new Date(success.finishedAt).toISOString() : null,
      lastFailure: view(runs.latestWith('failed')),
      nextRunAt: this.interval !== null && next ? new Date(next.nextRunAt).toISOString() : null,
      warning: this.warning(success, clock.now()),
    };
  }

  private warning(success: BackupRun | null, now: number): string | null {
    const interval = this.interval;
    if (interval === null) return null;
    const scheduled = this.deps.runs.latestScheduled();
    if (scheduled?.status === 'failed') return `The last scheduled backup failed: ${scheduled.error ?? 'unknown reason'}`;
    if (success?.finishedAt && now - success.finishedAt > 2 * interval) {
      return `The last successful backup is from ${new Date(success.finishedAt).toISOString()}, more than twice the schedule's interval ago`;
    }
    return null;
  }
}
