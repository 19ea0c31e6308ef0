import { useLayoutEffect, useRef } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import { displayName, familyOf } from '../app/format.ts';
import { hideExtensions } from '../app/session.ts';
import { ItemPicture } from '../files/item-picture.tsx';

// Thumbnails either side of the one shown: a strip of a 100,000-photo library stays a few dozen elements.
const REACH = 15;

/** The photos around the one shown, as small thumbnails to jump to (desktop; a phone shows the counter only). */
export function Filmstrip({ files, at, go }: { files: readonly Item[]; at: number; go: (index: number) => void }) {
  const strip = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    strip.current?.querySelector('[aria-current="true"]')?.scrollIntoView({ block: 'nearest', inline: 'center' });
  }, [at]);
  if (files.length < 2) return null;
  const from = Math.max(0, at - REACH);
  const hide = hideExtensions.value;
  return (
    <nav class="filmstrip" aria-label="Filmstrip">
      <div ref={strip} class="filmstrip-track">
        {files.slice(from, at + REACH + 1).map((item, n) => {
          const index = from + n;
          return (
            <button
              type="button"
              key={item.id}
              class={`filmstrip-item ${familyOf(item) === 'video' ? 'video' : ''}`}
              aria-label={displayName(item.name, item.type, hide)}
              aria-current={index === at ? 'true' : undefined}
              tabIndex={index === at ? 0 : -1}
              onClick={() => go(index)}
            >
              <ItemPicture item={item} box={56} icon={28} />
            </button>
          );
        })}
      </div>
    </nav>
  );
}
