import { useEffect, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';
import { FileIcon } from '../ui/icons.tsx';
import { NoPreview } from './documents.tsx';

/**
 * Video and audio stream from the download URL: the browser asks for byte ranges as it plays and seeks.
 * A video plays inline and muted (its sound one click away on its controls), over its first frame.
 */
export function MediaPreview({ item, video }: { item: Item; video: boolean }) {
  const [failed, setFailed] = useState(false);
  useEffect(() => setFailed(false), [item.id]);
  if (failed)
    return (
      <NoPreview
        item={item}
        reason={`This browser cannot play this ${video ? 'video' : 'audio file'}. Download it to play it in another app.`}
      />
    );
  const media = {
    key: item.id,
    src: api.files.downloadUrl(item),
    controls: true,
    autoplay: true,
    preload: 'metadata' as const,
    'aria-label': item.name,
    onError: () => setFailed(true),
  };
  // User files come without caption tracks.
  if (video)
    return (
      <video
        class="preview-media"
        muted
        playsInline
        poster={item.hasThumbnail ? api.files.thumbnailUrl(item, 'large') : undefined}
        {...media}
      />
    );
  return (
    <div class="preview-none">
      <FileIcon family="audio" size={72} />
      <audio {...media} />
    </div>
  );
}
