import { useSignal } from '@preact/signals';
import { formatDuration, formatSize, plural } from '../app/format.ts';
import { activeUploads, cancelAll, cancelUpload, clearFinished, retryUpload, type UploadItem, uploads } from '../app/uploads.ts';
import { familyOf } from '../app/format.ts';
import { FileIcon, Icon } from '../ui/icons.tsx';
import { Name } from '../ui/name.tsx';
import { DOCKED } from '../ui/toasts.tsx';

function Row({ u }: { u: UploadItem }) {
  const status = u.status.value;
  const size = u.file.size;
  const loaded = u.loaded.value;
  const speed = u.speed.value;
  const name = u.relativePath ?? u.file.name;
  let detail: string;
  if (status === 'uploading')
    detail =
      speed > 0
        ? `${formatSize(loaded)} of ${formatSize(size)} · ${formatSize(speed)}/s · ${formatDuration((size - loaded) / speed)} left`
        : `${formatSize(loaded)} of ${formatSize(size)}`;
  else if (status === 'queued') detail = `Waiting · ${formatSize(size)}`;
  else if (status === 'done') detail = `${u.replaceId ? 'Replaced' : 'Uploaded'} · ${formatSize(size)}`;
  else if (status === 'cancelled') detail = 'Cancelled';
  else detail = u.error.value ?? 'Failed';
  return (
    <li class={`upload ${status}`}>
      <FileIcon family={familyOf({ type: 'file', name: u.file.name, mimeType: u.file.type })} size={28} />
      <div class="upload-main">
        <Name class="upload-name" text={name} />
        <progress class="upload-bar" max={size || 1} value={status === 'done' ? size || 1 : loaded} aria-label={u.file.name} />
        <span class={`upload-detail ${status === 'failed' ? 'error-text' : ''}`}>{detail}</span>
      </div>
      {(status === 'uploading' || status === 'queued') && (
        <button type="button" class="icon-button" aria-label={`Cancel upload of ${u.file.name}`} onClick={() => cancelUpload(u)}>
          <Icon name="close" size={18} />
        </button>
      )}
      {(status === 'failed' || status === 'cancelled') && u.retryable && (
        <button type="button" class="button small" aria-label={`Retry upload of ${u.file.name}`} onClick={() => retryUpload(u)}>
          Retry
        </button>
      )}
      {status === 'done' && <Icon name="check" class="ok" />}
    </li>
  );
}

/** Docked bottom-right while anything was uploaded: each file's progress, speed, time left, cancel, retry. */
export function UploadPanel() {
  const open = useSignal(true);
  const list = uploads.value;
  if (!list.length) return null;
  const active = activeUploads.value;
  const failures = list.filter((u) => u.status.value === 'failed').map((u) => `${u.file.name}: ${u.error.value ?? 'Failed'}`);
  const failed = failures.length;
  const total = active.reduce((n, u) => n + u.file.size, 0);
  const sent = active.reduce((n, u) => n + u.loaded.value, 0);
  const speed = active.reduce((n, u) => n + u.speed.value, 0);
  const title = active.length
    ? `Uploading ${plural(active.length, 'file')}${speed > 0 ? ` · ${formatDuration((total - sent) / speed)} left` : ''}`
    : failed
      ? `${plural(failed, 'upload')} failed`
      : `${plural(list.length, 'upload')} complete`;
  // What a screen reader hears: that uploads started, then how they ended and why any failed, not every second left.
  const said = active.length ? `Uploading ${plural(active.length, 'file')}` : failed ? `${title}: ${failures.join('; ')}` : title;
  return (
    <section class={`upload-panel ${open.value ? 'open' : ''}`} aria-label="Uploads" {...DOCKED}>
      <p class="sr-only" role="status">
        {said}
      </p>
      <header class="upload-head">
        <button type="button" class="upload-toggle" aria-expanded={open.value} onClick={() => (open.value = !open.value)}>
          <span>{title}</span>
          <Icon name={open.value ? 'chevronDown' : 'arrowUp'} size={18} />
        </button>
        {active.length > 0 ? (
          <button type="button" class="button small ghost" onClick={cancelAll}>
            Cancel all
          </button>
        ) : (
          <button type="button" class="icon-button" aria-label="Close uploads" onClick={clearFinished}>
            <Icon name="close" size={18} />
          </button>
        )}
      </header>
      {open.value && (
        <ul class="upload-list" tabIndex={0} aria-label="Files being uploaded">
          {list.map((u) => (
            <Row key={u.id} u={u} />
          ))}
        </ul>
      )}
    </section>
  );
}
