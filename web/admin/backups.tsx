import { useState } from 'preact/hooks';
import type { BackupRunView } from '../../src/contract/admin.ts';
import { api } from '../api/index.ts';
import { exactDate, formatDate, formatDuration, formatSize } from '../app/format.ts';
import { useLoad } from '../app/load.ts';
import { toast, toastError } from '../app/toasts.ts';
import { ActionButton } from '../ui/form.tsx';
import { Icon } from '../ui/icons.tsx';
import { LoadError, Section } from '../ui/page.tsx';

const RESULT: Record<BackupRunView['status'], string> = { running: 'Running…', succeeded: 'Succeeded', failed: 'Failed' };

function When({ iso, exact }: { iso: string | null; exact?: boolean }) {
  if (!iso) return <span class="muted">—</span>;
  return (
    <time dateTime={iso} title={exactDate(iso)}>
      {exact ? exactDate(iso) : formatDate(iso)}
    </time>
  );
}

/** Scheduled backups: when the last ran and how it went, when the next runs, and "Back up now". */
export function Backups() {
  const status = useLoad(api.admin.backups, { everyMs: 5_000 });
  const [starting, setStarting] = useState(false);
  const s = status.data;
  const backUpNow = async () => {
    setStarting(true);
    try {
      await api.admin.backUpNow();
      toast('Backup started: this page shows when it is done');
      await status.reload();
    } catch (err) {
      toastError(err);
    } finally {
      setStarting(false);
    }
  };
  const last = s?.lastRun ?? null;
  const busy = starting || Boolean(s?.running);
  return (
    <>
      <Section
        title="Backups"
        intro="Full backups of the database, secrets.json and every file, written while Coffer runs. The schedule, destination and passphrase are set in /etc/coffer/coffer.env (BACKUP_SCHEDULE, BACKUP_DIR or BACKUP_S3_BUCKET, BACKUP_PASSPHRASE_FILE)."
      >
        {status.error && <LoadError message={status.error} retry={status.reload} />}
        {s?.warning && (
          <p class="update-state warn" role="alert">
            <Icon name="alert" />
            <span>{s.warning}</span>
          </p>
        )}
        {s && !s.encrypted && (
          <p class="update-state" role="note">
            <Icon name="lock" />
            <span>
              Archives are not encrypted and hold the master key. Set <code>BACKUP_PASSPHRASE_FILE</code> before copying them off this
              machine.
            </span>
          </p>
        )}
        {s && (
          <dl class="info-list wide">
            <dt>Schedule</dt>
            <dd>{s.schedule === 'off' ? 'Off: backups run only when started here or with coffer backup --full' : s.schedule}</dd>
            <dt>Next run</dt>
            <dd>
              <When iso={s.nextRunAt} exact />
            </dd>
            <dt>Destination</dt>
            <dd>
              <code>{s.destination}</code>
            </dd>
            <dt>Kept</dt>
            <dd>
              the newest {s.keep}, {s.encrypted ? 'encrypted' : 'not encrypted'}
            </dd>
          </dl>
        )}
        <div class="form-actions">
          <ActionButton busy={busy} class="button primary" disabled={!s} onClick={backUpNow}>
            {busy ? 'Backing up…' : 'Back up now'}
          </ActionButton>
        </div>
      </Section>
      <Section title="Last run">
        {s && !last && <p class="muted">No backup has run yet.</p>}
        {last && (
          <dl class="info-list wide">
            <dt>Result</dt>
            <dd class={`run-${last.status}`}>
              {RESULT[last.status]}
              {last.trigger === 'manual' ? ' (started by hand)' : ' (scheduled)'}
            </dd>
            <dt>Started</dt>
            <dd>
              <When iso={last.startedAt} />
            </dd>
            <dt>Duration</dt>
            <dd>{last.durationSeconds === null ? '—' : formatDuration(Math.max(1, Math.round(last.durationSeconds)))}</dd>
            <dt>Size</dt>
            <dd>{last.bytes === null ? '—' : formatSize(last.bytes)}</dd>
            {last.archive && (
              <>
                <dt>Archive</dt>
                <dd>
                  <code>{last.archive}</code>
                </dd>
              </>
            )}
          </dl>
        )}
      </Section>
      {s?.replication && (
        <Section
          title="Replication"
          intro="Every change to the database is sealed and shipped to the replica within a second (REPLICATE_TO). Restore with coffer restore --from-replica; a standby follows it with coffer serve --standby."
        >
          {s.replication.warning && (
            <p class="update-state warn" role="alert">
              <Icon name="alert" />
              <span>{s.replication.warning}</span>
            </p>
          )}
          <dl class="info-list wide">
            <dt>Replica</dt>
            <dd>
              <code>{s.replication.destination}</code>
            </dd>
            <dt>State</dt>
            <dd>{s.replication.generation ? `Shipping (generation ${s.replication.generation})` : 'Stopped'}</dd>
            <dt>Lag</dt>
            <dd>{s.replication.lagSeconds < 1 ? 'Up to date' : formatDuration(Math.round(s.replication.lagSeconds))}</dd>
            <dt>Last shipped</dt>
            <dd>
              <When iso={s.replication.lastShippedAt} exact />
            </dd>
            <dt>Waiting on disk</dt>
            <dd>{formatSize(s.replication.backlogBytes)}</dd>
          </dl>
        </Section>
      )}
      {s?.lastFailure && (
        <Section title="Latest failure">
          <p class="update-state warn">
            <Icon name="alert" />
            <span>
              <When iso={s.lastFailure.startedAt} />: {s.lastFailure.error ?? 'no reason was recorded'}
            </span>
          </p>
        </Section>
      )}
    </>
  );
}
