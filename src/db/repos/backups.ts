import { and, asc, count, desc, eq, isNotNull, sql } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { backupRuns } from '../schema/backups.ts';

export type BackupRun = typeof backupRuns.$inferSelect;

// Newest is last inserted: a start time is the wall clock's, which may have been set back since.
const newestFirst = desc(sql`rowid`);

/** The SQL of `backup_runs`: one row per run, newest first. */
export class BackupRunsRepo {
  constructor(private readonly db: Db) {}

  start(run: Pick<BackupRun, 'id' | 'trigger' | 'startedAt'>): void {
    this.db
      .insert(backupRuns)
      .values({ ...run, status: 'running' })
      .run();
  }

  finish(id: string, outcome: Pick<BackupRun, 'status' | 'finishedAt' | 'bytes' | 'archive' | 'error'>): void {
    this.db.update(backupRuns).set(outcome).where(eq(backupRuns.id, id)).run();
  }

  /** Runs a restart cut short: they are failed, and their job runs again. */
  failInterrupted(at: number, error: string): void {
    this.db.update(backupRuns).set({ status: 'failed', finishedAt: at, error }).where(eq(backupRuns.status, 'running')).run();
  }

  latest(): BackupRun | null {
    return this.db.select().from(backupRuns).orderBy(newestFirst).limit(1).get() ?? null;
  }

  latestWith(status: BackupRun['status']): BackupRun | null {
    return this.db.select().from(backupRuns).where(eq(backupRuns.status, status)).orderBy(newestFirst).limit(1).get() ?? null;
  }

  latestScheduled(): BackupRun | null {
    return this.db.select().from(backupRuns).where(eq(backupRuns.trigger, 'scheduled')).orderBy(newestFirst).limit(1).get() ?? null;
  }

  /** Where each succeeded run wrote its archive, oldest run first. */
  archives(): string[] {
    return this.db
      .select({ archive: backupRuns.archive })
      .from(backupRuns)
      .where(and(eq(backupRuns.status, 'succeeded'), isNotNull(backupRuns.archive)))
      .orderBy(asc(sql`rowid`))
      .all()
      .map((r) => r.archive!);
  }

  failures(): number {
    return this.db.select({ n: count() }).from(backupRuns).where(eq(backupRuns.status, 'failed')).get()?.n ?? 0;
  }
}
