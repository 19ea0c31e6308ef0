import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { OrphanDeletion, OrphanReport } from '../../src/contract/admin.ts';
import { api } from '../api/index.ts';
import { exactDate, formatDate, formatDuration, formatSize, plural } from '../app/format.ts';
import { confirmDialog } from '../ui/dialog.tsx';
import { ActionButton, Field, FormError, SubmitButton } from '../ui/form.tsx';
import { Section, TableWrap } from '../ui/page.tsx';
import type { Selection } from '../ui/selection.ts';
import { useSelection } from '../ui/use-selection.ts';
import { DOCKED } from '../ui/toasts.tsx';

// docs/api.md › Orphaned files: the grace window in minutes, and the default.
const GRACE = { min: 60, max: 525_600, default: 1440 };

/** 1440 → "1 day", 120 → "2 hours", 90 → "90 minutes". */
const graceText = (m: number) => (m % 1440 === 0 ? plural(m / 1440, 'day') : m % 60 === 0 ? plural(m / 60, 'hour') : plural(m, 'minute'));

/** Starts a job and polls it (202 while it runs) until it answers its result. */
async function runJob<T>(
  start: () => Promise<Response>,
  poll: (jobId: string) => Promise<Response>,
  alive: () => boolean,
): Promise<T | null> {
  let res = await start();
  const { jobId } = (await res.json()) as { jobId: string };
  for (let delay = 250; ; delay = Math.min(delay * 1.5, 2000)) {
    await new Promise((r) => setTimeout(r, delay));
    if (!alive()) return null;
    res = await poll(jobId);
    if (res.status === 200) return (await res.json()) as T;
  }
}

type Outcome = Map<string, { deleted: boolean; reason?: string }>;

/** One side of the report: a table of entries with check boxes, and what happened to each after a delete. */
function OrphanTable<T extends { size: number }>(props: {
  title: string;
  intro: string;
  part: { items: T[]; count: number; totalBytes: number; truncated: boolean };
  idOf: (entry: T) => string;
  columns: { title: string; cell: (entry: T) => preact.ComponentChildren }[];
  selection: Selection;
  outcome: Outcome;
}) {
  const { part, selection, idOf } = props;
  const selected = selection.ids.value;
  // Entries already deleted cannot be chosen again.
  const ids = part.items.map(idOf).filter((id) => !props.outcome.get(id)?.deleted);
  const all = ids.length > 0 && ids.every((id) => selected.has(id));
  return (
    <Section title={props.title} intro={props.intro}>
      <p>
        {plural(part.count, 'entry', 'entries')}, {formatSize(part.totalBytes)} in all.
        {part.truncated && ` The first ${part.items.length.toLocaleString()} are listed: delete these, then scan again for the rest.`}
      </p>
      {part.items.length > 0 && (
        <TableWrap label={`Entries: ${props.title}`}>
          <table class="table">
            <thead>
              <tr>
                <th scope="col" class="check-col">
                  <input
                    type="checkbox"
                    aria-label={`Select all: ${props.title}`}
                    checked={all}
                    disabled={!ids.length}
                    onChange={(e) => (e.currentTarget.checked ? selection.set(ids) : selection.clear())}
                  />
                </th>
                {props.columns.map((c) => (
                  <th key={c.title} scope="col">
                    {c.title}
                  </th>
                ))}
                <th scope="col">Size</th>
                <th scope="col">Result</th>
              </tr>
            </thead>
            <tbody>
              {part.items.map((entry, index) => {
                const id = idOf(entry);
                const done = props.outcome.get(id);
                return (
                  <tr key={id} class={done?.deleted ? 'gone' : ''}>
                    <td class="check-col">
                      <input
                        type="checkbox"
                        aria-label={`Select ${id}`}
                        disabled={done?.deleted}
                        checked={selected.has(id)}
                        onChange={() => selection.toggle(index)}
                      />
                    </td>
                    {props.columns.map((c) => (
                      <td key={c.title}>{c.cell(entry)}</td>
                    ))}
                    <td class="num">{formatSize(entry.size)}</td>
                    <td>
                      {done ? (
                        done.deleted ? (
                          <span class="pill ok">Deleted</span>
                        ) : (
                          <span class="pill warn">Skipped: {done.reason}</span>
                        )
                      ) : (
                        <span class="muted">—</span>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableWrap>
      )}
    </Section>
  );
}

/** Orphan review: scan (read-only), read the report, delete what was chosen after a confirmation. */
export function Orphans() {
  const [grace, setGrace] = useState(String(GRACE.default));
  const [report, setReport] = useState<OrphanReport | null>(null);
  const [running, setRunning] = useState<'scan' | 'delete' | null>(null);
  const [since, setSince] = useState(0);
  const [now, setNow] = useState(Date.now());
  const [error, setError] = useState<string | null>(null);
  // One selection per table, over the entries' ids (a stored object's key, a file row's id).
  const keys = useSelection(useMemo(() => (report?.storageOrphans.items ?? []).map((o) => ({ id: o.key })), [report]));
  const rows = useSelection(useMemo(() => (report?.databaseOrphans.items ?? []).map((o) => ({ id: o.id })), [report]));
  const [outcome, setOutcome] = useState<Outcome>(new Map());
  const [summary, setSummary] = useState<string | null>(null);
  const alive = useRef(true);
  useEffect(() => () => void (alive.current = false), []);
  useEffect(() => {
    if (!running) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [running]);

  const minutes = Number(grace);
  const graceProblem =
    !Number.isInteger(minutes) || minutes < GRACE.min || minutes > GRACE.max
      ? `The grace window must be a whole number of minutes from ${GRACE.min} to ${GRACE.max.toLocaleString()}.`
      : null;

  const scan = async () => {
    if (graceProblem) return setError(graceProblem);
    setRunning('scan');
    setSince(Date.now());
    setError(null);
    setSummary(null);
    try {
      const r = await runJob<OrphanReport>(
        () => api.admin.scanOrphans({ graceMinutes: minutes }),
        (jobId) => api.admin.scanOrphans({ jobId }),
        () => alive.current,
      );
      if (!r) return;
      setReport(r);
      keys.clear();
      rows.clear();
      setOutcome(new Map());
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setRunning(null);
    }
  };

  const remove = async () => {
    if (!report) return;
    const objects = report.storageOrphans.items.filter((o) => keys.has(o.key));
    const files = report.databaseOrphans.items.filter((o) => rows.has(o.id));
    const bytes = [...objects, ...files].reduce((n, o) => n + o.size, 0);
    const what = [objects.length ? plural(objects.length, 'stored object') : '', files.length ? plural(files.length, 'file row') : '']
      .filter(Boolean)
      .join(' and ');
    const ok = await confirmDialog({
      title: `Delete ${what}?`,
      message: `${what} (${formatSize(bytes)}) will be deleted for good. Each is checked again first; anything that no longer qualifies (a file now uses the object, the row is gone, it is too recent) is skipped and said so. This cannot be undone.`,
      confirm: 'Delete selected',
      danger: true,
    });
    if (!ok) return;
    setRunning('delete');
    setSince(Date.now());
    setError(null);
    try {
      const body = { storageKeys: objects.map((o) => o.key), fileIds: files.map((o) => o.id), graceMinutes: report.graceMinutes };
      const r = await runJob<OrphanDeletion>(
        () => api.admin.deleteOrphans(body),
        (jobId) => api.admin.deleteOrphans({ jobId }),
        () => alive.current,
      );
      if (!r) return;
      const next: Outcome = new Map(outcome);
      for (const e of r.storage.results) next.set(e.key, { deleted: e.deleted, reason: e.reason });
      for (const e of r.database.results) next.set(e.id, { deleted: e.deleted, reason: e.reason });
      setOutcome(next);
      keys.clear();
      rows.clear();
      const deleted = r.storage.deleted + r.database.deleted;
      const skipped = r.storage.skipped + r.database.skipped;
      setSummary(`Deleted ${plural(deleted, 'entry', 'entries')}${skipped ? `; skipped ${skipped} (the reason is beside each)` : ''}.`);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setRunning(null);
    }
  };

  const chosen = keys.ids.value.size + rows.ids.value.size;
  return (
    <>
      <Section
        title="Orphan review"
        intro="Finds stored objects that no file points at, and files whose stored object is missing (after a crash, a disk problem or files changed by hand). A scan only reads; nothing is deleted unless you select it here and confirm."
      >
        <form
          noValidate
          class="form inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            void scan();
          }}
        >
          <Field
            label="Grace window (minutes)"
            hint="Entries younger than this are left out: they may belong to an upload still in progress. 1440 = one day."
          >
            <input
              type="number"
              min={GRACE.min}
              max={GRACE.max}
              step={1}
              required
              value={grace}
              onInput={(e) => setGrace(e.currentTarget.value)}
            />
          </Field>
          <SubmitButton busy={running !== null}>Start scan</SubmitButton>
        </form>
        {running && (
          <p class="saved" role="status" aria-busy="true">
            {running === 'scan' ? 'Scanning storage and the database' : 'Checking and deleting the selected entries'}…{' '}
            {formatDuration(Math.max(1, (now - since) / 1000))}
          </p>
        )}
        <FormError message={error} />
        {report && (
          <p role="status">
            Scanned <span title={exactDate(report.scannedAt)}>{formatDate(report.scannedAt).toLowerCase()}</span> ({report.driver} storage):{' '}
            {plural(report.totals.storedObjects, 'stored object')}, {plural(report.totals.databaseRows, 'file row')};{' '}
            {plural(report.totals.skippedTooRecent, 'entry', 'entries')} younger than {graceText(report.graceMinutes)} left out.
          </p>
        )}
        {report?.incompleteUploadsUnlisted && (
          <p>
            Incomplete multipart uploads could not be listed on this storage, so none are in this report; the storage's own tools can list
            them. It answered: {report.incompleteUploadsUnlisted}
          </p>
        )}
        {summary && (
          <p class="saved" role="status">
            {summary}
          </p>
        )}
      </Section>
      {report && (
        <>
          <OrphanTable
            title="Stored objects without a file"
            intro="Encrypted objects in storage that no file row points at. Deleting one frees its space."
            part={report.storageOrphans}
            idOf={(o) => o.key}
            columns={[
              { title: 'Object', cell: (o) => <code class="key">{o.key}</code> },
              { title: 'Written', cell: (o) => <span title={exactDate(o.lastModified)}>{formatDate(o.lastModified)}</span> },
            ]}
            selection={keys}
            outcome={outcome}
          />
          <OrphanTable
            title="Files whose stored object is missing"
            intro="File rows whose contents are gone: they cannot be downloaded. Deleting one removes it from its owner's files and frees its quota."
            part={report.databaseOrphans}
            idOf={(o) => o.id}
            columns={[
              {
                title: 'File',
                cell: (o) => (
                  <>
                    {o.path}
                    {o.trashed && <span class="pill">In the trash</span>}
                  </>
                ),
              },
              { title: 'Owner', cell: (o) => o.ownerEmail ?? '—' },
            ]}
            selection={rows}
            outcome={outcome}
          />
          <div class="sticky-actions" {...DOCKED}>
            <span>{chosen ? `${plural(chosen, 'entry', 'entries')} selected` : 'Select entries to delete them.'}</span>
            <ActionButton busy={running !== null} class="button danger" disabled={!chosen} onClick={remove}>
              Delete selected
            </ActionButton>
          </div>
        </>
      )}
    </>
  );
}
