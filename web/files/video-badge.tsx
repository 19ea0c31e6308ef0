import { familyOf, formatDuration, runningTime } from '../app/format.ts';
import { Icon } from '../ui/icons.tsx';

/** On a video's tile: a play mark and, when the server read it, the running time (said by the tile's description). */
export function VideoBadge({ item }: { item: { name: string; type: string; mimeType?: string | null; duration?: number } }) {
  if (familyOf(item) !== 'video') return null;
  return (
    <span class="video-badge" aria-hidden="true">
      <Icon name="play" size={12} />
      {/* Drawn by CSS: the tile's name is its file name, and text inside it would have to be part of it. */}
      {item.duration !== undefined && <span class="video-duration" data-time={runningTime(item.duration)} />}
    </span>
  );
}

/** What a screen reader hears of a video in a folder's grid, where the tile's text is its name: as in Photos, "Video, 11 s". */
export function VideoWords({ item }: { item: { name: string; type: string; mimeType?: string | null; duration?: number } }) {
  if (familyOf(item) !== 'video') return null;
  return <span class="sr-only">{item.duration === undefined ? 'Video, ' : `Video, ${formatDuration(item.duration)}, `}</span>;
}
