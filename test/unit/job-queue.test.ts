import { afterEach, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { tempDir } from '../helpers/server.ts';
import { closeDatabase, openDatabase, type Db } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { ManualClock, systemClock } from '../../src/clock.ts';
import { defineJob } from '../../src/jobs/catalog.ts';
import { JobQueue } from '../../src/jobs/queue.ts';
import { JobsRepo } from '../../src/db/repos/jobs.ts';
import { JobRegistry, PermanentJobError, RetryLaterError } from '../../src/jobs/registry.ts';
import { Schedules } from '../../src/jobs/schedules.ts';
import { Worker, retryDelay } from '../../src/jobs/worker.ts';
import { createLogger } from '../../src/log.ts';
import { AppError } from '../../src/errors.ts';
import { eventually } from '../helpers/eventually.ts';

const cleanups: Array<() => void> = [];
/** A job kind with any payload, for tests of the queue mechanics. */
const kind = (name: string, maxAttempts?: number) => defineJob(name, z.any(), { maxAttempts });
afterEach(() => cleanups.splice(0).forEach((f) => f()));

function setup(dir = tempDir('coffer-queue-')) {
  const db: Db = openDatabase(path.join(dir, 'coffer.db'));
  migrate(db);
  const clock = new ManualClock(1_700_000_000_000);
  const jobs = new JobsRepo(db.$client);
  const queue = new JobQueue(jobs, clock, { available: true });
  const registry = new JobRegistry();
  const schedules = new Schedules(jobs, queue, clock, (fn) => db.$client.transaction(fn).immediate());
  const worker = new Worker({ queue, registry, schedules, clock, log: createLogger('silent'), concurrency: 4, pollMs: 10 });
  cleanups.push(() => {
    closeDatabase(db);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { dir, db, clock, queue, registry, schedules, worker };
}

/** A second connection to take the write lock with, the worker's own waiting 20 ms for it instead of 5 s. */
function lockingConnection(t: ReturnType<typeof setup>): Db {
  t.db.$client.run('PRAGMA busy_timeout = 20');
  const other = openDatabase(path.join(t.dir, 'coffer.db'));
  cleanups.push(() => closeDatabase(other));
  return other;
}

describe('job queue', () => {
  test('enqueue returns a UUID; the handler result is stored and the job completed', async () => {
    const t = setup();
    t.registry.register(defineJob('test.add', z.object({ a: z.number(), b: z.number() })), (p) => ({ sum: p.a + p.b }));
    const id = t.queue.enqueue(kind('test.add'), { a: 2, b: 3 }, { accountId: 'acc' });
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(t.queue.get(id)!.status).toBe('created');
    await t.worker.drain();
    const job = t.queue.get(id)!;
    expect(job.status).toBe('completed');
    expect(job.result).toEqual({ sum: 5 });
  });

  test('jobs of one account run one at a time, in order; other accounts run alongside', async () => {
    const t = setup();
    const log: string[] = [];
    let running = 0;
    let maxRunningA = 0;
    t.registry.register(defineJob('test.step', z.object({ account: z.string(), n: z.number() })), async (p) => {
      if (p.account === 'A') maxRunningA = Math.max(maxRunningA, ++running);
      // Jobs of uneven length, so a wrong order or overlap would show.
      await Bun.sleep(p.n % 2 ? 15 : 1);
      if (p.account === 'A') running--;
      log.push(`${p.account}${p.n}`);
    });
    for (let n = 1; n <= 5; n++) {
      t.queue.enqueue(kind('test.step'), { account: 'A', n }, { accountId: 'A' });
      t.queue.enqueue(kind('test.step'), { account: 'B', n }, { accountId: 'B' });
    }
    await t.worker.drain();
    expect(log.filter((s) => s.startsWith('A'))).toEqual(['A1', 'A2', 'A3', 'A4', 'A5']);
    expect(log.filter((s) => s.startsWith('B'))).toEqual(['B1', 'B2', 'B3', 'B4', 'B5']);
    expect(maxRunningA).toBe(1);
  });

  test('a job behind a retrying job of the same account waits for it', async () => {
    const t = setup();
    let failures = 1;
    const order: string[] = [];
    t.registry.register(defineJob('test.flaky', z.string()), (name) => {
      if (name === 'first' && failures-- > 0) throw new Error('transient');
      order.push(name);
    });
    const first = t.queue.enqueue(kind('test.flaky'), 'first', { accountId: 'A' });
    t.queue.enqueue(kind('test.flaky'), 'second', { accountId: 'A' });
    await t.worker.drain();
    expect(order).toEqual([]);
    const job = t.queue.get(first)!;
    expect(job.status).toBe('created');
    expect(job.lastError).toBe('transient');
    expect(job.runAt).toBe(t.clock.now() + retryDelay(1));
    t.clock.advance(retryDelay(1));
    await t.worker.drain();
    expect(order).toEqual(['first', 'second']);
  });

  test('retries with backoff until maxAttempts, then failed; permanent errors fail at once', async () => {
    const t = setup();
    let calls = 0;
    t.registry.register(defineJob('test.broken', z.null(), { maxAttempts: 3 }), () => {
      calls++;
      throw new Error('still broken');
    });
    t.registry.register(defineJob('test.hopeless', z.null()), () => {
      throw new PermanentJobError('no point');
    });
    const broken = t.queue.enqueue(kind('test.broken', 3), null);
    const hopeless = t.queue.enqueue(kind('test.hopeless'), null);
    for (let i = 0; i < 5; i++) {
      await t.worker.drain();
      t.clock.advance(10 * 60_000);
    }
    expect(calls).toBe(3);
    expect(t.queue.get(broken)!.status).toBe('failed');
    expect(t.queue.get(broken)!.attempts).toBe(3);
    expect(t.queue.get(hopeless)!.status).toBe('failed');
    expect(t.queue.get(hopeless)!.attempts).toBe(1);
    expect(retryDelay(1)).toBeLessThan(retryDelay(2));
    expect(retryDelay(30)).toBe(5 * 60_000);
  });

  test('RetryLaterError defers without spending an attempt', async () => {
    const t = setup();
    let n = 0;
    t.registry.register(defineJob('test.later', z.null(), { maxAttempts: 1 }), () => {
      if (n++ < 2) throw new RetryLaterError(1000);
      return 'done';
    });
    const id = t.queue.enqueue(kind('test.later', 1), null);
    for (let i = 0; i < 3; i++) {
      await t.worker.drain();
      t.clock.advance(1000);
    }
    expect(t.queue.get(id)!.status).toBe('completed');
  });

  test('unknown kinds and invalid payloads fail without retry', async () => {
    const t = setup();
    t.registry.register(defineJob('test.typed', z.object({ n: z.number() })), () => null);
    const unknown = t.queue.enqueue(kind('test.nobody'), {});
    const invalid = t.queue.enqueue(kind('test.typed'), { n: 'x' });
    await t.worker.drain();
    expect(t.queue.get(unknown)!.status).toBe('failed');
    expect(t.queue.get(unknown)!.lastError).toMatch(/no handler/);
    expect(t.queue.get(invalid)!.status).toBe('failed');
  });

  test('idempotency keys: a second enqueue returns the first job', () => {
    const t = setup();
    const a = t.queue.enqueue(kind('test.x'), 1, { idempotencyKey: 'k' });
    const b = t.queue.enqueue(kind('test.x'), 2, { idempotencyKey: 'k' });
    expect(b).toBe(a);
    expect(t.queue.get(a)!.payload).toBe(1);
    expect(t.queue.enqueue(kind('test.y'), 1, { idempotencyKey: 'k' })).not.toBe(a);
  });

  test('a job found active after a restart runs again; one past its attempts is failed', async () => {
    const dir = tempDir('coffer-queue-');
    const first = setup(dir);
    const id = first.queue.enqueue(kind('test.resume'), { v: 1 });
    const spent = first.queue.enqueue(kind('test.resume', 1), { v: 2 });
    expect(first.queue.claim()!.id).toBe(id);
    expect(first.queue.claim()!.id).toBe(spent);
    // The process dies here: both rows stay active.
    closeDatabase(first.db);
    cleanups.length = 0;

    const second = setup(dir);
    const ran: number[] = [];
    second.registry.register(defineJob('test.resume', z.object({ v: z.number() })), (p) => void ran.push(p.v));
    expect(second.queue.recoverInterrupted()).toEqual({ requeued: 1, failed: 1 });
    await second.worker.drain();
    expect(ran).toEqual([1]);
    expect(second.queue.get(id)!.status).toBe('completed');
    expect(second.queue.get(spent)!.status).toBe('failed');
  });

  test('a stopped worker makes enqueue report unavailable (503)', async () => {
    const t = setup();
    t.worker.start();
    await t.worker.stop(100);
    let err: unknown;
    try {
      t.queue.enqueue(kind('test.x'), null);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(503);
    expect((err as AppError).message).toBe('Background worker queue is unavailable');
  });

  test('a job whose completion finds the database locked is recorded once the lock goes, and does not run again', async () => {
    const t = setup();
    const other = lockingConnection(t);
    let runs = 0;
    t.registry.register(kind('test.locked-after'), () => {
      runs++;
      // Another connection takes the write lock as the handler ends and keeps it past the wait: the completion meets it.
      other.$client.run('BEGIN IMMEDIATE');
      setTimeout(() => other.$client.run('ROLLBACK'), 300);
      return { done: true };
    });
    t.registry.register(kind('test.after'), () => 'next');
    const id = t.queue.enqueue(kind('test.locked-after'), null, { accountId: 'acc' });
    // The account's next job waits for this one to be recorded as finished.
    const later = t.queue.enqueue(kind('test.after'), null, { accountId: 'acc' });
    await t.worker.drain();
    expect(runs).toBe(1);
    expect(t.queue.get(id)).toMatchObject({ status: 'completed', result: { done: true }, attempts: 1 });
    expect(t.queue.get(later)!.status).toBe('completed');
  });

  test('a job whose state cannot be written (not busy: the database refuses writes) is logged, and the worker goes on', async () => {
    const t = setup();
    t.registry.register(kind('test.unwritable'), () => {
      // Every write fails from here on, so the completion and then the failure cannot be recorded.
      t.db.$client.run('PRAGMA query_only = 1');
      return 'done';
    });
    const id = t.queue.enqueue(kind('test.unwritable'), null);
    await t.worker.drain();
    t.db.$client.run('PRAGMA query_only = 0');
    expect(t.queue.get(id)!.status).toBe('active');
    t.registry.register(kind('test.next'), () => 'next');
    const next = t.queue.enqueue(kind('test.next'), null);
    await t.worker.drain();
    expect(t.queue.get(next)).toMatchObject({ status: 'completed', result: 'next' });
  });

  test('a handler that finds the database locked gets its attempt back and runs again later', async () => {
    const t = setup();
    const other = lockingConnection(t);
    let runs = 0;
    t.registry.register(kind('test.locked-inside', 1), (_payload, { addProgress }) => {
      if (++runs > 1) return 'second';
      other.$client.run('BEGIN IMMEDIATE');
      try {
        addProgress(1);
      } finally {
        other.$client.run('ROLLBACK');
      }
      return 'first';
    });
    const id = t.queue.enqueue(kind('test.locked-inside', 1), null);
    await t.worker.drain();
    expect(t.queue.get(id)).toMatchObject({ status: 'created', attempts: 0 });
    t.clock.advance(60_000);
    await t.worker.drain();
    expect(runs).toBe(2);
    expect(t.queue.get(id)).toMatchObject({ status: 'completed', result: 'second', attempts: 1 });
  });

  test('a started worker picks up enqueued jobs by itself; stop waits for the running job', async () => {
    const t = setup();
    let finished = false;
    t.registry.register(defineJob('test.slow', z.null()), async () => {
      // The job's work: long enough to be running when stop is called.
      await Bun.sleep(50);
      finished = true;
    });
    t.worker.start();
    const id = t.queue.enqueue(kind('test.slow'), null);
    await eventually(() => t.queue.get(id)!.status !== 'created', { timeoutMs: 500, intervalMs: 5 });
    expect(t.queue.get(id)!.status).toBe('active');
    await t.worker.stop(5000);
    expect(finished).toBe(true);
    expect(t.queue.get(id)!.status).toBe('completed');
  });
});

describe('job worker wake-ups', () => {
  test('a job queued to run shortly is run when due, not at the next poll', async () => {
    const dir = tempDir('coffer-queue-');
    const db: Db = openDatabase(path.join(dir, 'coffer.db'));
    migrate(db);
    const jobs = new JobsRepo(db.$client);
    const queue = new JobQueue(jobs, systemClock, { available: true });
    const registry = new JobRegistry();
    const schedules = new Schedules(jobs, queue, systemClock, (fn) => db.$client.transaction(fn).immediate());
    // A poll far off: only the wake-up at the job's time can run it within the test.
    const worker = new Worker({
      queue,
      registry,
      schedules,
      clock: systemClock,
      log: createLogger('silent'),
      concurrency: 1,
      pollMs: 60_000,
    });
    cleanups.push(() => {
      closeDatabase(db);
      fs.rmSync(dir, { recursive: true, force: true });
    });
    let ranAt = 0;
    registry.register(defineJob('test.paced', z.null()), async () => {
      ranAt = Date.now();
    });
    worker.start();
    try {
      const queuedAt = Date.now();
      const id = queue.insert(defineJob('test.paced', z.null()), null, { runAt: queuedAt + 200 });
      await eventually(() => expect(queue.get(id)!.status).toBe('completed'));
      expect(ranAt - queuedAt).toBeGreaterThanOrEqual(200);
    } finally {
      await worker.stop(1000);
    }
  });
});

describe('schedules', () => {
  test('a due schedule enqueues one job per window, survives restarts, and skips missed windows', async () => {
    const dir = tempDir('coffer-sched-');
    const t = setup(dir);
    const runs: number[] = [];
    t.registry.register(defineJob('test.tick', z.null()), () => void runs.push(t.clock.now()));
    t.schedules.ensure('tick', { job: kind('test.tick'), intervalMs: 60_000 });
    await t.worker.drain();
    expect(runs.length).toBe(0);
    t.clock.advance(60_000);
    expect(t.schedules.runDue()).toBe(1);
    expect(t.schedules.runDue()).toBe(0);
    await t.worker.drain();
    expect(runs.length).toBe(1);
    t.clock.advance(10 * 60_000 + 5);
    await t.worker.drain();
    expect(runs.length).toBe(2);
    expect(t.schedules.get('tick')!.nextRunAt).toBeGreaterThan(t.clock.now());
    expect(t.schedules.remove('tick')).toBe(true);
    t.clock.advance(3600_000);
    await t.worker.drain();
    expect(runs.length).toBe(2);
  });

  test('a poll with nothing due takes no write lock: it neither waits for nor fails on another thread holding one', () => {
    const t = setup();
    t.schedules.ensure('s', { job: kind('k'), intervalMs: 60_000 });
    t.queue.enqueue(kind('k'), null, { runAt: t.clock.now() + 60_000 });
    // Another connection (the index writer's, in the server) holds the write lock; this one would wait 100 ms, then fail.
    const writer = openDatabase(path.join(t.dir, 'coffer.db'));
    writer.$client.run('BEGIN IMMEDIATE');
    t.db.$client.run('PRAGMA busy_timeout = 100');
    try {
      expect(t.queue.claim()).toBeNull();
      expect(t.schedules.runDue()).toBe(0);
    } finally {
      writer.$client.run('ROLLBACK');
      closeDatabase(writer);
    }
    t.clock.advance(60_000);
    expect(t.schedules.runDue()).toBe(1);
    expect(t.queue.claim()).not.toBeNull();
  });

  test('ensure keeps the next run time of an existing schedule', () => {
    const t = setup();
    t.schedules.ensure('s', { job: kind('k'), intervalMs: 1000 });
    const next = t.schedules.get('s')!.nextRunAt;
    t.clock.advance(500);
    t.schedules.ensure('s', { job: kind('k'), intervalMs: 1000 });
    expect(t.schedules.get('s')!.nextRunAt).toBe(next);
  });
});
