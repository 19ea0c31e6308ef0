import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Item } from '../../src/contract/files.ts';
import { Icon } from '../ui/icons.tsx';
import { NoPreview } from './documents.tsx';
import { attachGestures, type View } from './gestures.ts';
import { decode, fittedUrl, originalUrl, showsOriginal } from './preload.ts';

const MAX_SCALE = 8;

/**
 * One picture, fitted to the stage; zoom by wheel (towards the pointer), pinch, double-click or double-tap,
 * buttons and + - 0; pan by dragging once zoomed. The original is fetched only when zoomed in.
 */
export function ZoomImage({ item, onSwipe }: { item: Item; onSwipe: (dir: 1 | -1) => void }) {
  const img = useRef<HTMLImageElement>(null);
  const area = useRef<HTMLDivElement>(null);
  const view = useRef<View>({ scale: 1, x: 0, y: 0 });
  const [failed, setFailed] = useState(false);
  const [src, setSrc] = useState(() => fittedUrl(item));
  const original = useRef<'no' | 'loading' | 'shown'>('no');
  const [zoomed, setZoomed] = useState(false);

  const loadOriginal = () => {
    if (original.current !== 'no' || !showsOriginal(item) || fittedUrl(item) === originalUrl(item)) return;
    original.current = 'loading';
    performance.mark('viewer:original-requested', { detail: item.id });
    void decode(originalUrl(item)).then(() => {
      original.current = 'shown';
      setSrc(originalUrl(item));
    });
  };
  const apply = () => {
    const v = view.current;
    if (img.current) img.current.style.transform = `translate(${v.x}px, ${v.y}px) scale(${v.scale})`;
    setZoomed(v.scale > 1);
    if (v.scale > 1) loadOriginal();
  };
  /** Zooms by `factor` (0: back to fitted) keeping the point (cx, cy) from the stage's middle where it is. */
  const zoom = (factor: number, cx = 0, cy = 0) => {
    const v = view.current;
    const scale = factor === 0 ? 1 : Math.min(MAX_SCALE, Math.max(1, v.scale * factor));
    const k = scale / v.scale;
    v.x = scale === 1 ? 0 : cx - (cx - v.x) * k;
    v.y = scale === 1 ? 0 : cy - (cy - v.y) * k;
    v.scale = scale;
    apply();
  };
  // Before the first paint: a swipe made as soon as the picture shows is not lost.
  useLayoutEffect(() => {
    const keys = (e: KeyboardEvent) => {
      if (e.key === '+' || e.key === '=') zoom(1.25);
      else if (e.key === '-') zoom(0.8);
      else if (e.key === '0') zoom(0);
    };
    addEventListener('keydown', keys);
    const detach = attachGestures(area.current!, view.current, { zoom, apply, onSwipe });
    return () => {
      removeEventListener('keydown', keys);
      detach();
    };
  }, []);
  if (failed) return <NoPreview item={item} reason="This image could not be shown by the browser." />;
  const shown = () =>
    requestAnimationFrame(() =>
      performance.mark(src === originalUrl(item) ? 'viewer:original-shown' : 'viewer:shown', { detail: item.id }),
    );
  return (
    <div class="preview-stage">
      <div ref={area} class={`zoom-area ${zoomed ? 'zoomed' : ''}`}>
        <img
          ref={(el) => {
            img.current = el;
            // Decoded ahead (a neighbour): complete before any load event could say so.
            if (el?.complete && el.naturalWidth && el.dataset.shown !== src) {
              el.dataset.shown = src;
              shown();
            }
          }}
          src={src}
          alt={item.name}
          draggable={false}
          onLoad={(e) => {
            const el = e.currentTarget;
            if (el.dataset.shown === src) return;
            el.dataset.shown = src;
            shown();
          }}
          onError={() => (src !== originalUrl(item) && showsOriginal(item) ? setSrc(originalUrl(item)) : setFailed(true))}
        />
      </div>
      <div class="zoom-buttons">
        <button type="button" class="icon-button" aria-label="Zoom out" onClick={() => zoom(0.8)}>
          <Icon name="zoomOut" />
        </button>
        <button type="button" class="icon-button" aria-label="Zoom in" onClick={() => zoom(1.25)}>
          <Icon name="zoomIn" />
        </button>
      </div>
    </div>
  );
}
