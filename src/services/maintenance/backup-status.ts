// Types only, no imports: the web app reads them too (web/admin/backups.tsx).

/** One backup run, as GET /api/user/backups shows it. */
export interface BackupRunView {
  trigger: 'scheduled' | 'manual';
  status: 'running' | 'succeeded' | 'failed';
  startedAt: string;
  finishedAt: string | null;
  durationSeconds: number | null;
  bytes: number | null;
  archive: string | null;
  error: string | null;
}

export interface BackupStatus {
  schedule: string;
  destination: string;
  encrypted: boolean;
  keep: number;
  running: boolean;
  lastRun: BackupRunView | null;
  lastSuccessAt: string | null;
  lastFailure: BackupRunView | null;
  nextRunAt: string | null;
  /** Why an admin should look: the last scheduled backup failed, or the last success is older than twice the interval. */
  warning: string | null;
}
