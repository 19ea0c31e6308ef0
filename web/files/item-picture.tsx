import { useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';
import { familyOf } from '../app/format.ts';
import { FileIcon } from '../ui/icons.tsx';

/**
 * A file's small thumbnail where its type can have one, else (or when it has none after all) its icon.
 * Only rows on screen are rendered (the lists are virtualised), and the browser loads them lazily too.
 */
export function ItemPicture({ item, box, icon }: { item: Item; box: number; icon: number }) {
  const [failed, setFailed] = useState(false);
  if (item.type === 'file' && item.hasThumbnail && !failed) {
    return (
      <img
        class="thumb"
        src={api.files.thumbnailUrl(item)}
        alt=""
        width={box}
        height={box}
        loading="lazy"
        decoding="async"
        draggable={false}
        onError={() => setFailed(true)}
      />
    );
  }
  return <FileIcon family={familyOf(item)} size={icon} />;
}
