import { formatSize } from '../app/format.ts';
import { storage } from '../app/storage.ts';

/** Storage used, against the limit when there is one. */
export function StorageMeter({ compact = false }: { compact?: boolean }) {
  const s = storage.value;
  if (!s) return null;
  const fraction = s.total ? Math.min(1, s.used / s.total) : null;
  return (
    <div class={`storage ${compact ? '' : 'wide'}`}>
      <div class="storage-text">
        {compact && <span>Storage</span>}
        <span class={compact ? 'muted' : ''}>
          {s.total
            ? `${formatSize(s.used)} of ${formatSize(s.total)}${compact ? '' : ` used (${formatSize(Math.max(0, s.total - s.used))} free)`}`
            : `${formatSize(s.used)} used${compact ? '' : ', no limit'}`}
        </span>
      </div>
      {fraction !== null && <progress class={`meter ${fraction > 0.9 ? 'full' : ''}`} value={fraction} max={1} aria-label="Storage used" />}
    </div>
  );
}
